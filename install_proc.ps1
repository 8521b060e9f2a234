# Install BigMind into a virtual environment and print the MCP client configuration (Windows).
# Usage: .\install_proc.ps1 [-Venv DIR]      (default DIR: ~\.mcp\bigmind\venv)
# Re-running is safe: the venv is reused and BigMind upgraded in place.
param([string]$Venv = (Join-Path $HOME ".mcp\bigmind\venv"))
$ErrorActionPreference = "Stop"

$here = Split-Path -Parent $MyInvocation.MyCommand.Path
$py = if ($env:PYTHON) { $env:PYTHON } else { "python" }
& $py -c "import sys; sys.exit(sys.version_info < (3, 11))"
if ($LASTEXITCODE -ne 0) { Write-Error "BigMind needs Python 3.11 or newer; set `$env:PYTHON"; exit 1 }

$venvPy = Join-Path $Venv "Scripts\python.exe"
if (Get-Command uv -ErrorAction SilentlyContinue) {
    if (-not (Test-Path $venvPy)) { uv venv --quiet --python $py $Venv }
    uv pip install --quiet --python $venvPy --upgrade $here
} else {
    if (-not (Test-Path $venvPy)) { & $py -m venv $Venv }
    & $venvPy -m pip install --quiet --upgrade $here
}
if ($LASTEXITCODE -ne 0) { Write-Error "pip install failed"; exit 1 }

$bin = Join-Path $Venv "Scripts\bigmind.exe"
& $bin version
$json = $bin.Replace("\", "\\")
Write-Output @"

BigMind is installed. Add it to your MCP client, e.g. .mcp.json / .cursor/mcp.json /
claude_desktop_config.json:

{
  "mcpServers": {
    "bigmind": { "command": "$json", "args": ["serve"] }
  }
}
"@
