"""`bigmind serve --http`: many users over MCP's streamable HTTP, each the user their token says."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import httpx2
import pytest
from conftest import free_port
from gateway_world import Running, mcp_session, running, text
from mcp_calls import INITIALIZE

from bigmind.config import Settings
from bigmind.memory import api_tokens
from bigmind.models import new_id, now_ts
from bigmind.storage.api_tokens_table import Tokens
from bigmind.storage.users_table import Users

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]
INIT = INITIALIZE
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


@pytest.fixture
def gateway(settings_for: Callable[[str], Settings]) -> Iterator[Running]:
    with running(settings_for("gateway"), free_port()) as gw:
        yield gw


def post(gw: Running, token: str | None, body: Any = INIT, **headers: str) -> httpx2.Response:
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return httpx2.post(f"{gw.url}/mcp", json=body, headers={**MCP_HEADERS, **headers})


async def test_each_user_gets_their_own_memory(gateway: Running) -> None:
    alice, bob = gateway.token("alice"), gateway.token("bob")
    async with mcp_session(gateway.url, alice) as a:
        tools = await a.list_tools()
        assert len(tools.tools) > 30
        stored = await a.call_tool(
            "memory_store_fact", {"category": "decision", "fact": "Payments use RabbitMQ"}
        )
        assert "Stored fact" in text(stored)
        stats = json.loads(text(await a.call_tool("memory_get_stats", {})))
        assert stats["user"] == "alice" and stats["counts"]["facts"] == 1
    # A header naming someone else changes nothing: the token decides.
    async with mcp_session(gateway.url, bob, **{"X-BigMind-User": "alice"}) as b:
        stats = json.loads(text(await b.call_tool("memory_get_stats", {})))
        assert stats["user"] == "bob" and stats["counts"]["facts"] == 0
        found = await b.call_tool("memory_search_facts", {"query": "RabbitMQ"})
        assert text(found).startswith("No facts match")
        refused = await b.call_tool("memory_get_stats", {"user_id": "alice"})
        assert refused.is_error


def test_no_or_bad_token_is_401(gateway: Running) -> None:
    none = post(gateway, None)
    assert none.status_code == 401
    assert none.headers["www-authenticate"] == 'Bearer realm="BigMind"'
    assert "bigmind token create" in none.json()["error"]["message"]
    bad = post(gateway, "bm_" + "x" * 43)
    assert bad.status_code == 401
    assert 'error="invalid_token"' in bad.headers["www-authenticate"]
    basic = post(gateway, None, Authorization="Basic YWxpY2U6c2VjcmV0")
    assert basic.status_code == 401


def test_revoked_and_expired_tokens_are_401(gateway: Running) -> None:
    db = gateway.rt.store.db
    secret = gateway.token("alice")
    assert post(gateway, secret).status_code == 200
    api_tokens.revoke(db, "alice")
    assert post(gateway, secret).status_code == 401
    old = api_tokens.PREFIX + "expired-token-for-the-test"
    user = Users(db, "").by_name("alice")
    assert user is not None
    with db.transaction() as tx:
        Tokens(db, "").insert(
            tx, new_id(), user.id, api_tokens.digest(old), None, now_ts(), "2020-01-01 00:00:00"
        )
    assert api_tokens.check(db, old) is None
    assert post(gateway, old).status_code == 401


def test_a_used_token_records_when(gateway: Running) -> None:
    secret = gateway.token("alice")
    assert post(gateway, secret).status_code == 200
    (listed,) = api_tokens.listed(gateway.rt.store.db, "alice")
    assert listed.last_used_at is not None


async def test_another_users_session_id_is_not_found(gateway: Running) -> None:
    alice, bob = gateway.token("alice"), gateway.token("bob")
    opened = post(gateway, alice)
    session = opened.headers["mcp-session-id"]
    notice = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert post(gateway, alice, notice, **{"Mcp-Session-Id": session}).status_code == 202
    hijack = post(gateway, bob, notice, **{"Mcp-Session-Id": session})
    assert hijack.status_code == 404


def test_too_large_a_request_is_413(gateway: Running) -> None:
    secret = gateway.token("alice")
    big = {**INIT, "params": {**INIT["params"], "pad": "x" * (5 * 1024 * 1024)}}  # type: ignore[dict-item]
    assert post(gateway, secret, big).status_code == 413


def test_malformed_json_rpc_is_answered_not_dropped(gateway: Running) -> None:
    secret = gateway.token("alice")
    reply = httpx2.post(
        f"{gateway.url}/mcp",
        content=b"{not json",
        headers={
            **MCP_HEADERS,
            "Authorization": f"Bearer {secret}",
            "Content-Type": "application/json",
        },
    )
    assert reply.status_code == 400
    assert reply.json()["error"]["code"] == -32700


def test_requests_beyond_the_rate_limit_are_429(settings_for: Callable[[str], Settings]) -> None:
    settings = settings_for("gateway").model_copy(update={"rate_limit": 1})  # bursts of 10
    with running(settings, free_port()) as gw:
        secret, other = gw.token("alice"), gw.token("bob")
        codes = [post(gw, secret).status_code for _ in range(12)]
        assert codes[:10] == [200] * 10
        assert codes[-1] == 429
        limited = post(gw, secret)
        assert int(limited.headers["retry-after"]) >= 1
        assert post(gw, other).status_code == 200  # per token, not for everyone


async def test_the_restart_tool_is_refused_on_the_gateway(gateway: Running) -> None:
    async with mcp_session(gateway.url, gateway.token("alice")) as a:
        refused = await a.call_tool("memory_restart_server", {})
    assert refused.is_error and "operator" in text(refused)


async def test_exports_go_to_a_folder_of_the_users_own(gateway: Running) -> None:
    async with mcp_session(gateway.url, gateway.token("alice")) as a:
        done = await a.call_tool("memory_export", {"output_path": "mine.json"})
    path = json.loads(json.dumps(done.structured_content))["path"]
    alice = Users(gateway.rt.store.db, "").by_name("alice")
    assert alice is not None and f"/users/{alice.id}/exports/" in path
    async with mcp_session(gateway.url, gateway.token("bob")) as b:
        taken = await b.call_tool("memory_import", {"input_path": "mine.json"})
    assert taken.is_error  # bob's folder has no such file; alice's is out of his reach


def test_pages_need_a_login_and_forms_its_csrf(gateway: Running) -> None:
    secret = gateway.token("alice")
    with httpx2.Client(base_url=gateway.url, follow_redirects=False) as web:
        first = web.get("/facts?x=1")
        assert first.status_code == 303
        assert first.headers["location"] == "/login?next=/facts%3Fx%3D1"
        assert web.get("/login").status_code == 200
        wrong = web.post("/login", data={"token": "bm_nope", "next": "/facts"})
        assert wrong.status_code == 401 and "Not logged in" in wrong.text
        ok = web.post("/login", data={"token": secret, "next": "https://evil.example/"})
        assert ok.status_code == 303 and ok.headers["location"] == "/"
        cookie = ok.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie
        home = web.get("/")
        assert home.status_code == 200 and "alice" in home.text
        forged = web.post("/facts/1/deprecate", data={"csrf": "guess", "reason": "x"})
        assert forged.status_code == 403
        # The login cookie opens the pages only: MCP and the REST API want the bearer token.
        assert web.get("/api/v1/facts").status_code == 401
        assert web.post("/mcp", json=INIT, headers=MCP_HEADERS).status_code == 401
        token = home.text.split('name="csrf" value="')[1].split('"')[0]
        out = web.post("/logout", data={"csrf": token})
        assert out.status_code == 303
        assert web.get("/").status_code == 303  # the login is gone
    # A bearer token reaches the pages without a cookie, and a forged form still fails.
    bearer = {"Authorization": f"Bearer {secret}"}
    assert httpx2.get(f"{gateway.url}/", headers=bearer).status_code == 200
    identity = httpx2.get(f"{gateway.url}/api/identity", headers=bearer).json()
    assert identity["user"] == "alice"


class _Keys(BaseHTTPRequestHandler):
    body = b"{}"

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def issuer() -> Iterator[tuple[str, Any]]:
    """An OIDC issuer's JWKS on 127.0.0.1, and its key pair to sign tokens with."""
    from fastmcp.server.auth.providers.jwt import RSAKeyPair
    from joserfc.jwk import RSAKey

    keys = RSAKeyPair.generate()
    jwk = RSAKey.import_key(keys.public_key, {"kid": "k1", "use": "sig"}).as_dict(private=False)
    handler = type("Keys", (_Keys,), {"body": json.dumps({"keys": [jwk]}).encode()})
    server = HTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/jwks.json", keys
    finally:
        server.shutdown()
        server.server_close()


async def test_oidc_jwts_name_their_user(
    settings_for: Callable[[str], Settings], issuer: tuple[str, Any]
) -> None:
    url, keys = issuer
    settings = settings_for("gateway").model_copy(
        update={
            "oidc_jwks_url": url,
            "oidc_issuer": "https://sso.example.com",
            "oidc_audience": "bigmind",
        }
    )

    def jwt(**kw: Any) -> str:
        token: str = keys.create_token(
            subject="u-42",
            issuer=kw.pop("issuer", "https://sso.example.com"),
            audience=kw.pop("audience", "bigmind"),
            kid="k1",
            additional_claims={"preferred_username": "carol", **kw},
        )
        return token

    with running(settings, free_port()) as gw:
        async with mcp_session(gw.url, jwt()) as c:
            stats = json.loads(text(await c.call_tool("memory_get_stats", {})))
        assert stats["user"] == "carol"
        assert post(gw, jwt(audience="another-app")).status_code == 401
        assert post(gw, jwt(issuer="https://evil.example.com")).status_code == 401
        assert post(gw, jwt(preferred_username=None)).status_code == 401
        assert post(gw, gw.token("dave")).status_code == 200  # BigMind tokens still work


WRITER = """
import anyio, json, sys
from gateway_world import mcp_session

async def main(url, token):
    async with mcp_session(url, token) as s:
        for n in range(10_000):
            r = await s.call_tool("memory_store_fact", {"category": "fact", "fact": f"write {n}"})
            print(json.dumps([r.structured_content["fact_id"], f"write {n}"]), flush=True)

anyio.run(main, *sys.argv[1:])
"""


@pytest.mark.slow
def test_a_client_killed_mid_call_loses_nothing_it_was_told_was_saved(gateway: Running) -> None:
    import os
    import signal
    import subprocess
    import sys
    from pathlib import Path

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])}
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, gateway.url, gateway.token("erin")],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    acked = []
    for line in proc.stdout:  # bounded: the writer stops at 10,000; we stop at 20
        acked.append(json.loads(line))
        if len(acked) == 20:
            proc.send_signal(signal.SIGKILL)
            break
    proc.wait(10)
    proc.stdout.close()
    assert len(acked) == 20
    store = gateway.rt.store_of("erin")
    for fact_id, text_ in acked:
        found = store.facts.get(int(fact_id))
        assert found is not None and found.fact == text_


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"[" * 1000 + b"]" * 1000, -32700),  # nests deeper than any parser should follow
        (b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": "x"}', -32600),
        (b'{"jsonrpc": "2.0", "id": 8, "method": "ping", "params": {"a": "\\ud800"}}', -32602),
        (b"\xff\xfe", -32700),
    ],
)
def test_what_the_sdk_would_choke_on_is_answered_as_on_stdio(
    gateway: Running, body: bytes, code: int
) -> None:
    reply = httpx2.post(
        f"{gateway.url}/mcp",
        content=body,
        headers={
            **MCP_HEADERS,
            "Authorization": f"Bearer {gateway.token('alice')}",
            "Content-Type": "application/json",
        },
    )
    assert reply.status_code == 400
    assert reply.json()["error"]["code"] == code


async def test_health_and_metrics_need_no_token_and_count_calls_and_refusals(
    gateway: Running,
) -> None:
    health = httpx2.get(f"{gateway.url}/healthz")
    assert health.status_code == 200 and health.json()["status"] == "ok"
    assert post(gateway, "bm_" + "y" * 43).status_code == 401
    async with mcp_session(gateway.url, gateway.token("alice")) as a:
        await a.call_tool("memory_get_stats", {})
    scrape = httpx2.get(f"{gateway.url}/metrics")
    assert scrape.status_code == 200
    lines = scrape.text.splitlines()
    assert any(
        ln.startswith("bigmind_tool_calls_total{") and 'tool="memory_get_stats"' in ln
        for ln in lines
    )
    assert any(
        ln.startswith("bigmind_http_refused_total{") and "invalid_token" in ln for ln in lines
    )
    assert "alice" not in scrape.text  # nothing per user


async def test_each_call_works_in_the_project_of_its_clients_roots(
    gateway: Running, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import httpx2 as http_client
    from mcp import ClientSession, types
    from mcp.client.streamable_http import streamable_http_client

    from bigmind.mcp import roots as roots_middleware

    # The roots round trip is what this tests, not its 2 s limit (a busy machine can miss it).
    monkeypatch.setattr(roots_middleware, "ROOTS_TIMEOUT_S", 120.0)

    (tmp_path / "shop" / ".git").mkdir(parents=True)

    async def roots(context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=f"file://{tmp_path}/shop")])

    headers = {"Authorization": f"Bearer {gateway.token('alice')}"}
    async with (
        http_client.AsyncClient(headers=headers, timeout=30) as http,
        streamable_http_client(f"{gateway.url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write, list_roots_callback=roots) as session,
    ):
        await session.initialize()
        stored = await session.call_tool(
            "memory_store_fact", {"category": "codebase", "fact": "The shop is written in Go"}
        )
    assert "(project shop)" in text(stored)


def test_the_open_login_form_reads_no_more_than_a_form(gateway: Running) -> None:
    huge = httpx2.post(f"{gateway.url}/login", data={"token": "x" * 100_000, "next": "/"})
    assert huge.status_code == 400 and "too large" in huge.text
    fields = "&".join(f"f{i}=1" for i in range(20))
    many = httpx2.post(
        f"{gateway.url}/login",
        content=fields.encode(),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert many.status_code == 400
