#!/usr/bin/env bash
# Install BigMind into a virtual environment and wire it into your MCP clients.
# Usage: ./install_proc.sh [--client NAME]... [--project DIR] [--venv DIR] [--no-hooks]
#   NAME        copilot, cursor, claude-code, claude-desktop, jetbrains or all
#               (default: asked on a terminal, all otherwise)
#   --project   wire this project's own files (the ones its team commits) instead of your
#               user-level client config; never BigMind's own folder
#   --venv      where to install (default: ~/.mcp/bigmind/venv)
#   --no-hooks  no Claude Code SessionStart/SessionEnd hooks
# Without --project, each client is configured for your user: every project on this machine
# (Claude Desktop on macOS and Windows only). `bigmind` is linked into ~/.local/bin, since the
# project files a team commits start it from PATH. Add a project later with
#   bigmind install --client NAME --project DIR
# Re-running is safe: the venv is reused, BigMind upgraded in place, client files left as they are.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd -P)"
venv="${HOME}/.mcp/bigmind/venv"
project=""
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
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "install_proc.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done

project_args=()
if [ -n "$project" ]; then
  [ -d "$project" ] || { echo "install_proc.sh: --project $project: no such folder" >&2; exit 2; }
  # Refused before anything is installed (`bigmind install` refuses any BigMind checkout too).
  case "$(cd "$project" && pwd -P)/" in
    "$here"/*) echo "install_proc.sh: $project is BigMind's own folder, not a project to wire:" \
                    "pass --project with the project you work on, or leave --project out to" \
                    "configure your clients at user level." >&2
               exit 2 ;;
  esac
  project_args=(--project "$project")
fi

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
venv="$(cd "$venv" && pwd)"
bin="$venv/bin/bigmind"
"$bin" version

# Project files start `bigmind` by name: put this installation on PATH through ~/.local/bin.
links="$HOME/.local/bin"
mkdir -p "$links"
if [ -e "$links/bigmind" ] && [ ! -L "$links/bigmind" ]; then
  echo "install_proc.sh: $links/bigmind is not a link, so it was left as it is." >&2
else
  ln -sfn "$bin" "$links/bigmind"
  echo "Linked $links/bigmind -> $bin" >&2
fi
case ":$PATH:" in
  *":$links:"*) ;;
  *) echo "Note: $links is not on your PATH, and project files start \`bigmind\` from it;" \
          "add it in your shell profile: export PATH=\"\$HOME/.local/bin:\$PATH\"" >&2 ;;
esac

client_args=()
for c in "${clients[@]}"; do client_args+=(--client "$c"); done
"$bin" install "${client_args[@]}" ${project_args[@]+"${project_args[@]}"} "$hooks"
echo >&2
"$bin" doctor ${project_args[@]+"${project_args[@]}"}
