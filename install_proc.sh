#!/usr/bin/env bash
# Install BigMind into a virtual environment and wire it into your MCP clients.
# Usage: ./install_proc.sh [--client NAME]... [--project DIR] [--venv DIR] [--no-hooks]
#   NAME      copilot, cursor, claude-code, claude-desktop, jetbrains or all
#             (default: asked on a terminal, all otherwise)
#   --project the project whose client files to edit (default: the current folder)
#   --venv    where to install (default: ~/.mcp/bigmind/venv)
#   --no-hooks  no Claude Code SessionStart/SessionEnd hooks
# Re-running is safe: the venv is reused, BigMind upgraded in place, client files left as they are.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
venv="${HOME}/.mcp/bigmind/venv"
project="$(pwd)"
clients=()
hooks=--hooks
while [ $# -gt 0 ]; do
  case "$1" in
    --client) [ $# -ge 2 ] || { echo "install_proc.sh: --client needs a name" >&2; exit 2; }
              clients+=("$2"); shift 2 ;;
    --project) [ $# -ge 2 ] || { echo "install_proc.sh: --project needs a folder" >&2; exit 2; }
               project="$2"; shift 2 ;;
    --venv) [ $# -ge 2 ] || { echo "install_proc.sh: --venv needs a folder" >&2; exit 2; }
            venv="$2"; shift 2 ;;
    --no-hooks) hooks=--no-hooks; shift ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install_proc.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done

if [ ${#clients[@]} -eq 0 ]; then
  if [ -t 0 ]; then
    printf 'Wire BigMind into which clients? (copilot cursor claude-code claude-desktop jetbrains, or all) [all]: '
    read -r answer || answer=""
    for c in ${answer//,/ }; do clients+=("$c"); done
  fi
  [ ${#clients[@]} -gt 0 ] || clients=(all)
fi

py="${PYTHON:-python3}"
if ! "$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "install_proc.sh: BigMind needs Python 3.11 or newer ($py is older or missing); set PYTHON=…" >&2
  exit 1
fi

echo "Installing BigMind into $venv …" >&2
if command -v uv >/dev/null 2>&1; then
  [ -x "$venv/bin/python" ] || uv venv --quiet --python "$py" "$venv"
  uv pip install --quiet --python "$venv/bin/python" --upgrade "$here"
else
  [ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade "$here"
fi

bin="$venv/bin/bigmind"
"$bin" version
client_args=()
for c in "${clients[@]}"; do client_args+=(--client "$c"); done
"$bin" install "${client_args[@]}" --project "$project" "$hooks"
echo >&2
"$bin" doctor --project "$project"
