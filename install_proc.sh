#!/usr/bin/env bash
# Install BigMind into a virtual environment and print the MCP client configuration.
# Usage: ./install_proc.sh [--venv DIR]      (default DIR: ~/.mcp/bigmind/venv)
# Re-running is safe: the venv is reused and BigMind upgraded in place.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
venv="${HOME}/.mcp/bigmind/venv"
while [ $# -gt 0 ]; do
  case "$1" in
    --venv) venv="$2"; shift 2 ;;
    -h|--help) sed -n '2,4p' "$0"; exit 0 ;;
    *) echo "install_proc.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done

py="${PYTHON:-python3}"
if ! "$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "install_proc.sh: BigMind needs Python 3.11 or newer ($py is older or missing); set PYTHON=…" >&2
  exit 1
fi

if command -v uv >/dev/null 2>&1; then
  [ -x "$venv/bin/python" ] || uv venv --quiet --python "$py" "$venv"
  uv pip install --quiet --python "$venv/bin/python" --upgrade "$here"
else
  [ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --upgrade "$here"
fi

bin="$venv/bin/bigmind"
"$bin" version
cat <<JSON

BigMind is installed. Add it to your MCP client, e.g. .mcp.json / .cursor/mcp.json /
claude_desktop_config.json:

{
  "mcpServers": {
    "bigmind": { "command": "$bin", "args": ["serve"] }
  }
}

VS Code (.vscode/mcp.json):

{
  "servers": {
    "bigmind": { "type": "stdio", "command": "$bin", "args": ["serve"] }
  }
}
JSON
