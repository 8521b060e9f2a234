"""No write path stores a secret: every MCP write tool, every CLI write command and every
write endpoint of the REST API, on both backends, then the raw rows of every table, what search, the packet, session detail and an
export show, and the replies, which name what was redacted.

The lists below must name every write tool and every command that stores text: a new one
fails ``test_every_write_path_is_covered`` until it is added here (and redacts).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from cli_run import run_hook
from mcp_calls import Cli, call
from rest_client import api_as
from secret_corpus import Fakes, database_text, seed_raw

from bigmind.cli.main import COMMANDS, main
from bigmind.config import Settings
from bigmind.memory import transfer
from bigmind.runtime import Runtime
from bigmind.storage.connect import open_database
from bigmind.storage.store import Store
from bigmind.web import rest

pytestmark = pytest.mark.anyio
PACKAGE = Path(__file__).resolve().parents[2] / "bigmind"
REPORTED = "Redacted before storing:"


@dataclass
class World:
    client: Cli
    rt: Runtime
    tmp: Path
    fakes: Fakes = field(default_factory=lambda: Fakes(21))
    secrets: list[str] = field(default_factory=list)
    session: str = ""

    def secret(self, kind: str) -> str:
        value, must_go = self.fakes.make(kind)
        self.secrets.extend(must_go)
        return value

    async def stores(self, tool: str, **args: Any) -> dict[str, Any]:
        """Call a tool that stores a secret: its reply names the redaction, never the value."""
        text, data = await call(self.client, tool, **args)
        assert REPORTED in text and data["redacted"], (tool, text)
        leaked = [s for s in self.secrets if s in text or s in json.dumps(data)]
        assert leaked == [], (tool, leaked, text, data)
        return data


Write = Callable[[World], Awaitable[None]]
WRITES: dict[str, Write] = {}
# Write tools that store no free text (names, ids, numbers), or write no memory.
NO_TEXT = {
    "memory_start_session": "opens a session; stores an IDE hint, a name",
    "memory_close_stale_sessions": "closes sessions with a fixed one-liner",
    "memory_vacuum": "deletes chunks",
    "memory_export": "writes a file: checked for secrets below",
    "memory_restart_server": "exits the process",
    "memory_forget": "deletes a memory; its reason is echoed, never stored",
}


def writes(tool: str) -> Callable[[Write], Write]:
    def register(fn: Write) -> Write:
        WRITES[tool] = fn
        return fn

    return register


@writes("memory_import")
async def _import(w: World) -> None:
    """A file exported by a version that stored secrets: every table of it holds some."""
    old = open_database(Settings(db_path=w.tmp / "old" / "memory.db", db_url=None, user="alice"))
    try:
        planted = seed_raw(Store(old, "alice"), Fakes(22))
        target = w.tmp / "old-export.json"
        transfer.write_export(Store(old, "alice"), target)
    finally:
        old.close()
    w.secrets += planted.strings
    assert all(s in target.read_text() for s in w.secrets)
    await w.stores("memory_import", input_path=str(target))


@writes("memory_store_fact")
async def _store_fact(w: World) -> None:
    key = w.secret("aws-access-key")
    await w.stores("memory_store_fact", category="codebase", fact=f"The deploy user's key is {key}")


@writes("memory_deprecate_fact")
async def _deprecate_fact(w: World) -> None:
    _, data = await call(w.client, "memory_store_fact", category="codebase", fact="Billing v1 API")
    reason = f"v2 now; the old key {w.secret('stripe-live-key')} was revoked"
    await w.stores("memory_deprecate_fact", fact_id=data["fact_id"], reason=reason)


@writes("memory_update_fact")
async def _update_fact(w: World) -> None:
    _, data = await call(w.client, "memory_store_fact", category="codebase", fact="CI deploy user")
    token = w.secret("github-token")
    await w.stores(
        "memory_update_fact",
        fact_id=data["fact_id"],
        fact=f"CI deploys with the token {token}",
        reason=f"the old token {w.secret('slack-bot-token')} was rotated",
    )


@writes("memory_end_session")
async def _end_session(w: World) -> None:
    text, data = await call(w.client, "memory_end_session", **_end_args(w))
    assert REPORTED in text and sum(data["redacted"].values()) == 5


def _end_args(w: World) -> dict[str, Any]:
    url = f"postgres://app:{w.secret('django-secret')[:16]}@db.internal/payments"
    return {
        "session_id": w.session,
        "one_liner": f"Rotated {w.secret('github-token')}",
        "topics": ["deploy"],
        "outcome": f"Slack bot moved to {w.secret('slack-bot-token')}",
        "summary": f"We pasted the deploy key:\n{w.secret('rsa-private-key')}\nthen rotated it.",
        "key_facts": [f"Authorization: Bearer {w.secret('jwt')}"],
        "code_refs": [f"DATABASE_URL={url}"],
    }


@writes("memory_flag_important")
async def _flag_important(w: World) -> None:
    await w.stores(
        "memory_flag_important",
        content=f"OPENAI_API_KEY={w.secret('openai-key')} is the staging key",
        flag_reason=f"credential {w.secret('gitlab-token')} leaked in CI",
        session_id=w.session,
    )


@writes("memory_append_chunk")
async def _append_chunk(w: World) -> None:
    content = f'client_secret: "{w.secret("base64-secret")}"'
    await w.stores("memory_append_chunk", content=content, role="user", session_id=w.session)


@writes("memory_update_profile")
async def _update_profile(w: World) -> None:
    await w.stores(
        "memory_update_profile",
        role=f"SRE; pager key {w.secret('google-api-key')}",
        preferences=f"SENDGRID_API_KEY={w.secret('sendgrid-key')}",
        pinned_facts=[f"Twilio key {w.secret('twilio-api-key')}"],
    )


@writes("memory_announce_focus")
async def _announce_focus(w: World) -> None:
    description = f"Publishing with NPM_TOKEN={w.secret('npm-token')}"
    await w.stores("memory_announce_focus", session_id=w.session, description=description)


@writes("memory_log_token_save")
async def _log_token_save(w: World) -> None:
    await w.stores(
        "memory_log_token_save",
        session_id=w.session,
        description=f"recalled the PyPI token {w.secret('pypi-token')}",
        tokens_saved=500,
        method_used="memory",
    )


@writes("memory_add_hypothesis")
async def _add_hypothesis(w: World) -> None:
    text = f"The bot fails because {w.secret('discord-token')} was revoked"
    await w.stores("memory_add_hypothesis", hypothesis=text, session_id=w.session)


@writes("memory_record_attempt")
async def _record_attempt(w: World) -> None:
    await w.stores(
        "memory_record_attempt",
        approach=f"Deploy with the token {w.secret('github-pat')}",
        outcome="failed",
        why=f"{w.secret('npm-token')} had no publish scope",
        session_id=w.session,
    )


@writes("memory_resolve_hypothesis")
async def _resolve_hypothesis(w: World) -> None:
    _, data = await call(w.client, "memory_add_hypothesis", hypothesis="The bot token expired")
    await w.stores(
        "memory_resolve_hypothesis",
        hypothesis_id=data["hypothesis_id"],
        status="confirmed",
        resolution=f"yes: {w.secret('telegram-token')} had expired",
    )


@writes("memory_remind")
async def _remind(w: World) -> None:
    text = f"rotate AccountKey={w.secret('azure-account-key')} before Friday"
    await w.stores("memory_remind", text=text, when="2020-01-01", session_id=w.session)


@writes("memory_remember_person")
async def _remember_person(w: World) -> None:
    await w.stores(
        "memory_remember_person",
        username="dana",
        display_name="Dana",
        role=f"owns {w.secret('square-secret')}",
        team="payments",
        expertise=["billing"],
        notes=f"her Mailchimp key is {w.secret('mailchimp-key')}",
    )


@writes("memory_promote_to_global")
async def _promote_to_global(w: World) -> None:
    await w.stores(
        "memory_promote_to_global",
        category="standard",
        title=f"Key {w.secret('aws-access-key')}",
        content=f"ANTHROPIC_API_KEY={w.secret('anthropic-key')} is shared",
    )


@writes("memory_approve_global")
async def _approve_global(w: World) -> None:
    _, data = await call(
        w.client, "memory_promote_to_global", category="pattern", title="Retries", content="x"
    )
    notes = f"leaked with {w.secret('github-pat')}"
    await w.stores(
        "memory_approve_global", entry_id=data["entry_id"], action="deprecate", notes=notes
    )


async def test_every_write_path_is_covered(client: Cli) -> None:
    tools = await client.list_tools()
    write_tools = {t.name for t in tools if not (t.annotations and t.annotations.read_only_hint)}
    assert write_tools == set(WRITES) | set(NO_TEXT)
    assert {n for n, c in COMMANDS.items() if c.stores} == set(CLI_WRITES)


async def test_no_write_tool_stores_a_secret(client: Cli, runtime: Runtime, tmp_path: Path) -> None:
    w = World(client, runtime, tmp_path)
    _, data = await call(client, "memory_start_session", ide_hint="claude-code")
    w.session = data["session_id"]
    for write in WRITES.values():
        await write(w)
    assert len(w.secrets) >= 40
    raw = database_text(runtime.store.db)
    assert [s[:12] for s in w.secrets if s.lower() in raw] == []
    assert "[redacted:" in raw

    shown = []
    for tool, args in (
        ("memory_get_context", {}),
        ("memory_get_session_detail", {"session_id": w.session, "max_tokens": 50_000}),
        ("memory_recall", {"query": "deploy key token staging shared", "limit": 100}),
        ("memory_search_facts", {"query": "deploy key", "include_deprecated": True}),
        ("memory_search_chunks", {"query": "secret staging key"}),
        ("memory_list_people", {}),
        ("memory_list_global", {"status": "deprecated"}),
        ("memory_list_hypotheses", {"status": "all"}),
        ("memory_get_active_sessions", {}),
        ("memory_diff_sessions", {"since_session_id": w.session}),
    ):
        text, data = await call(client, tool, **args)
        shown.append(text + json.dumps(data))
    seen = "\n".join(shown)
    assert [s[:12] for s in w.secrets if s in seen] == []
    assert "[REDACTED:aws-access-key]" in seen and "[REDACTED:private-key]" in seen

    _, data = await call(client, "memory_export", output_path="after.json")
    exported = Path(data["path"]).read_text(encoding="utf-8")
    assert [s[:12] for s in w.secrets if s in exported] == []
    assert "[REDACTED:jwt]" in exported


async def test_a_paraphrase_check_never_embeds_the_secret(client: Cli) -> None:
    """The reply of a write that changed nothing still never repeats a secret."""
    key = Fakes(23).make("aws-access-key")[0]
    await call(client, "memory_store_fact", category="codebase", fact=f"Deploy key {key}")
    text, data = await call(
        client, "memory_store_fact", category="codebase", fact=f"Deploy key {key}"
    )
    assert data["created"] is False and key not in text + json.dumps(data)


# -- the REST API -------------------------------------------------------------------------------
# Its write endpoints that store no free text (ids, names), or write no memory.
REST_NO_TEXT = {
    ("POST", "/sessions"): "opens a session; stores an IDE hint (the focus is not kept)",
    ("DELETE", "/facts/{fact_id}"): "forgets a fact",
}


def test_no_rest_write_stores_a_secret(runtime: Runtime) -> None:
    """Every write endpoint of /api/v1 redacts, and its answer counts what it redacted."""
    fakes, secrets = Fakes(26), []

    def secret(kind: str) -> str:
        value, must_go = fakes.make(kind)
        secrets.extend(must_go)
        return value

    with api_as(runtime, "alice") as api:

        def stores(method: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
            r = api.call(method, path, json=body)
            assert r.status_code in (200, 201) and r.json()["redacted"], (path, r.text)
            assert [s for s in secrets if s in r.text] == [], path
            data: dict[str, Any] = r.json()
            return data

        sid = api.post("/sessions", {"ide_hint": "curl"}).json()["session"]["id"]
        fact = stores(
            "POST", "/facts", {"category": "codebase", "fact": f"key {secret('aws-access-key')}"}
        )
        fid = fact["fact"]["id"]
        written = {
            ("POST", "/facts"),
            ("PATCH", "/facts/{fact_id}"),
            ("POST", "/facts/{fact_id}/deprecate"),
            ("POST", "/sessions/{session_id}/end"),
            ("POST", "/global"),
            ("POST", "/global/{entry_id}/review"),
        }
        stores(
            "PATCH",
            f"/facts/{fid}",
            {"fact": f"token {secret('github-token')}", "reason": secret("slack-bot-token")},
        )
        stores(
            "POST", f"/facts/{fid}/deprecate", {"reason": f"rotated {secret('stripe-live-key')}"}
        )
        ended = stores(
            "POST",
            f"/sessions/{sid}/end",
            {
                "one_liner": f"Rotated {secret('github-token')}",
                "outcome": secret("npm-token"),
                "summary": f"pasted\n{secret('rsa-private-key')}",
                "key_facts": [f"Authorization: Bearer {secret('jwt')}"],
                "code_refs": [f"OPENAI_API_KEY={secret('openai-key')}"],
            },
        )
        assert sum(ended["redacted"].values()) == 5
        entry = stores(
            "POST",
            "/global",
            {
                "category": "standard",
                "title": f"Key {secret('aws-access-key')}",
                "content": f"ANTHROPIC_API_KEY={secret('anthropic-key')}",
            },
        )
        stores(
            "POST",
            f"/global/{entry['entry']['id']}/review",
            {"action": "deprecate", "notes": f"leaked with {secret('github-pat')}"},
        )
        endpoints = {(e.method, e.path) for e in rest.endpoints(runtime) if e.method != "GET"}
        assert endpoints == written | set(REST_NO_TEXT), "add the new write endpoint here"
    raw = database_text(runtime.store.db)
    assert len(secrets) >= 10
    assert [s[:12] for s in secrets if s.lower() in raw] == []
    assert "[redacted:" in raw


# -- the command line ---------------------------------------------------------------------------
CLI_WRITES = ("close", "import", "import-md", "mirror")


def test_bigmind_close_redacts_its_one_liner(
    store: Store, capsys: pytest.CaptureFixture[str]
) -> None:
    token = Fakes(24).make("github-token")[0]
    sid = store.start_session().session.id
    assert main(["close", "--one-liner", f"deployed with {token}"]) == 0
    _, err = capsys.readouterr()
    assert err.strip() == "bigmind: Redacted before storing: 1 GitHub token."
    assert store.get_session(sid).one_liner == "deployed with [REDACTED:github-token]"


def test_the_session_end_hook_redacts_the_first_prompt(store: Store, tmp_path: Path) -> None:
    """The prompt is redacted before it is cut to a one-liner's length (a secret cut in half
    would not be found)."""
    key = Fakes(25).make("aws-access-key")[0]
    sid = store.start_session().session.id
    prompt = "x" * 95 + f" use {key} to deploy the staging stack and check the logs"
    path = tmp_path / "transcript.jsonl"
    lines = [
        {"type": "user", "message": {"role": "user", "content": prompt}},
        {"type": "assistant", "message": {"content": f"🧠 BigMind Session: `{sid}`"}},
    ]
    path.write_text("\n".join(json.dumps(e) for e in lines) + "\n")
    r = run_hook("close", event={"transcript_path": str(path), "reason": "exit"})
    assert r.returncode == 0 and REPORTED in r.stderr, r.stderr
    line = store.get_session(sid).one_liner
    assert line.startswith("[auto-closed] x") and " use [REDA" in line  # cut after redaction
    assert key[:8] not in line


def test_bigmind_import_redacts_an_old_export(
    store: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = open_database(Settings(db_path=tmp_path / "old" / "memory.db", db_url=None, user="alice"))
    try:
        planted = seed_raw(Store(old, "alice"), Fakes(26))
        transfer.write_export(Store(old, "alice"), tmp_path / "old.json")
    finally:
        old.close()
    assert main(["import", str(tmp_path / "old.json")]) == 0
    _, err = capsys.readouterr()
    last = err.splitlines()[-1]  # after the progress bar
    assert last.startswith(f"bigmind: {REPORTED} ") and "1 private key" in last
    raw = database_text(store.db)
    assert [s for s in planted.strings if s.lower() in raw] == []


def test_bigmind_import_md_redacts_a_bullet(
    store: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    token = Fakes(27).make("github-token")[0]
    notes = tmp_path / "AGENTS.md"
    notes.write_text(f"# Notes\n\n- The release job reads {token} from the vault\n")
    assert main(["import-md", str(notes), "--project", str(tmp_path)]) == 0
    _, err = capsys.readouterr()
    assert err.strip().splitlines()[-1] == f"bigmind: {REPORTED} 1 GitHub token."
    raw = database_text(store.db)
    assert token.lower() not in raw and "[redacted:github-token]" in raw


def test_bigmind_mirror_pull_redacts_an_edited_and_a_new_line(
    store: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bigmind import project

    key, token = Fakes(28).make("aws-access-key")[0], Fakes(28).make("github-token")[0]
    with project.using(project.of_folder(tmp_path)):
        fact, _, _ = store.store_fact("codebase", "The deploy uses a key", scope="project")
    out = tmp_path / "mirror.md"
    args = ["mirror", "--project", str(tmp_path), "--output", str(out)]
    assert main(args) == 0
    text = out.read_text().replace(
        f"[#{fact.id}] The deploy uses a key", f"[#{fact.id}] Deploy key {key}"
    )
    out.write_text(text.replace("### codebase\n", f"### codebase\n\n- CI token {token}\n"))
    capsys.readouterr()
    assert main([*args, "--pull"]) == 0
    _, err = capsys.readouterr()
    assert err.strip().splitlines()[-1].startswith(f"bigmind: {REPORTED} ")
    raw = database_text(store.db)
    assert key.lower() not in raw and token.lower() not in raw
    assert key not in out.read_text() and token not in out.read_text()


# -- the validators -------------------------------------------------------------------------------
# "id" and "text": what memory_forget and purge look for (a pasted secret must match itself).
# Read, never kept: names, ids, queries, and the tag a session list is filtered by.
NOT_STORED = {
    *("username", "session_id", "ide_hint", "query", "method_used", "project", "id", "text"),
    "topic",
}


def _plain_checks() -> list[tuple[str, int, str]]:
    """Every call of the validators that do not redact, with the field name it checks."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "limits.py" and path.parent == PACKAGE:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            fn = node.func
            name = fn.id if isinstance(fn, ast.Name) else getattr(fn, "attr", "")
            if name in ("check_text", "optional_text"):
                first = node.args[0] if node.args else None
                field_name = first.value if isinstance(first, ast.Constant) else "<not a literal>"
                out.append((str(path.relative_to(PACKAGE)), node.lineno, str(field_name)))
    return out


def test_stored_text_never_goes_through_a_validator_that_does_not_redact() -> None:
    """Text that is kept uses limits.stored_text / optional_stored / stored_lines; the plain
    check_text / optional_text only for queries, names and ids."""
    calls = _plain_checks()
    assert calls, "the check finds the validators' calls"
    assert [c for c in calls if c[2] not in NOT_STORED] == []
