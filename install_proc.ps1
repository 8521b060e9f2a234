# Install BigMind into a virtual environment and wire it into your MCP clients (Windows).
# Usage: .\install_proc.ps1 [-Client NAME[,NAME…]] [-Project DIR] [-Venv DIR] [-NoHooks]
#   NAME      copilot, cursor, claude-code, claude-desktop, jetbrains or all
#             (default: asked in an interactive console, all otherwise)
#   -Project  wire this project's own files (the ones its team commits) instead of your
#             user-level client config; never BigMind's own folder
#   -Venv     where to install (default: ~\.mcp\bigmind\venv)
#   -NoHooks  no Claude Code SessionStart/SessionEnd hooks
# Without -Project, each client is configured for your user: every project on this machine.
# bigmind.exe is copied into ~\.local\bin, since the project files a team commits start
# `bigmind` from PATH. Add a project later with: bigmind install --client NAME --project DIR
# Re-running is safe: the venv is reused, BigMind upgraded in place, client files left as they are.
param(
    [string[]]$Client = @(),
    [string]$Project = "",
    [string]$Venv = (Join-Path $HOME ".mcp\bigmind\venv"),
    [switch]$NoHooks
)
$ErrorActionPreference = "Stop"

$here = Split-Path -Parent $MyInvocation.MyCommand.Path
$projectArgs = @()
if ($Project) {
    if (-not (Test-Path -LiteralPath $Project -PathType Container)) {
        [Console]::Error.WriteLine("install_proc.ps1: -Project ${Project}: no such folder")
        exit 2
    }
    # Refused before anything is installed (`bigmind install` refuses any BigMind checkout too).
    $abs = (Resolve-Path -LiteralPath $Project).ProviderPath.TrimEnd('\') + '\'
    $root = (Resolve-Path -LiteralPath $here).ProviderPath.TrimEnd('\') + '\'
    if ($abs.StartsWith($root, [StringComparison]::OrdinalIgnoreCase)) {
        [Console]::Error.WriteLine("install_proc.ps1: $Project is BigMind's own folder, not a project to wire: pass -Project with the project you work on, or leave -Project out to configure your clients at user level.")
        exit 2
    }
    $projectArgs = @("--project", $Project)
}
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

$bin = Join-Path (Resolve-Path -LiteralPath $Venv).ProviderPath "Scripts\bigmind.exe"
& $bin version

# Project files start `bigmind` by name: put this installation on PATH through ~\.local\bin.
# A copy, not a link (links need extra rights on Windows); the launcher runs the venv's Python.
$links = Join-Path $HOME ".local\bin"
New-Item -ItemType Directory -Force -Path $links | Out-Null
try {
    Copy-Item -Force -LiteralPath $bin -Destination (Join-Path $links "bigmind.exe")
    Write-Host "Copied $bin to $links"
} catch {
    Write-Warning "Could not update $links\bigmind.exe (in use? close your MCP clients, run again): $_"
}
$onPath = ($env:Path + ";" + [Environment]::GetEnvironmentVariable("Path", "User")) -split ';' |
    Where-Object { $_ -and ($_.TrimEnd('\') -ieq $links) }
if (-not $onPath) {
    Write-Host "Note: $links is not on your PATH, and project files start ``bigmind`` from it; add it:"
    Write-Host "  [Environment]::SetEnvironmentVariable('Path', '$links;' + [Environment]::GetEnvironmentVariable('Path', 'User'), 'User')"
}

$clientArgs = @()
foreach ($c in $Client) { $clientArgs += @("--client", $c) }
$hooks = if ($NoHooks) { "--no-hooks" } else { "--hooks" }
& $bin install @clientArgs @projectArgs $hooks
if ($LASTEXITCODE -ne 0) { exit $LASTEXITCODE }
Write-Host ""
& $bin doctor @projectArgs
exit $LASTEXITCODE
