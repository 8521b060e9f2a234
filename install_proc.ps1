# Install BigMind into a virtual environment and wire it into your MCP clients (Windows).
# Usage: .\install_proc.ps1 [-Client NAME[,NAME…]] [-Project DIR] [-Venv DIR] [-NoHooks]
#   NAME      copilot, cursor, claude-code, claude-desktop, jetbrains or all
#             (default: asked in an interactive console, all otherwise)
#   -Project  the project whose client files to edit (default: the current folder)
#   -Venv     where to install (default: ~\.mcp\bigmind\venv)
#   -NoHooks  no Claude Code SessionStart/SessionEnd hooks
# Re-running is safe: the venv is reused, BigMind upgraded in place, client files left as they are.
param(
    [string[]]$Client = @(),
    [string]$Project = (Get-Location).Path,
    [string]$Venv = (Join-Path $HOME ".mcp\bigmind\venv"),
    [switch]$NoHooks
)
$ErrorActionPreference = "Stop"

$here = Split-Path -Parent $MyInvocation.MyCommand.Path
if ($Client.Count -eq 0) {
    if ([Environment]::UserInteractive -and -not [Console]::IsInputRedirected) {
        $answer = Read-Host "Wire BigMind into which clients? (copilot cursor claude-code claude-desktop jetbrains, or all) [all]"
        $Client = @($answer -split '[,\s]+' | Where-Object { $_ })
    }
    if ($Client.Count -eq 0) { $Client = @("all") }
}

$py = if ($env:PYTHON) { $env:PYTHON } else { "python" }
& $py -c "import sys; sys.exit(sys.version_info < (3, 11))"
if ($LASTEXITCODE -ne 0) { Write-Error "BigMind needs Python 3.11 or newer; set `$env:PYTHON"; exit 1 }

Write-Host "Installing BigMind into $Venv …"
$venvPy = Join-Path $Venv "Scripts\python.exe"
if (Get-Command uv -ErrorAction SilentlyContinue) {
    if (-not (Test-Path $venvPy)) { uv venv --quiet --python $py $Venv }
    if ($LASTEXITCODE -ne 0) { Write-Error "could not create $Venv"; exit 1 }
    uv pip install --quiet --python $venvPy --upgrade $here
} else {
    if (-not (Test-Path $venvPy)) { & $py -m venv $Venv }
    if ($LASTEXITCODE -ne 0) { Write-Error "could not create $Venv"; exit 1 }
    & $venvPy -m pip install --quiet --disable-pip-version-check --upgrade $here
}
if ($LASTEXITCODE -ne 0) { Write-Error "pip install failed"; exit 1 }

$bin = Join-Path $Venv "Scripts\bigmind.exe"
& $bin version
$clientArgs = @()
foreach ($c in $Client) { $clientArgs += @("--client", $c) }
$hooks = if ($NoHooks) { "--no-hooks" } else { "--hooks" }
& $bin install @clientArgs --project $Project $hooks
if ($LASTEXITCODE -ne 0) { exit $LASTEXITCODE }
Write-Host ""
& $bin doctor --project $Project
exit $LASTEXITCODE
