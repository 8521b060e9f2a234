"""The gateway's page logins end with their token, and browsers from other origins are refused."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator

import httpx2
import pytest
from conftest import free_port
from gateway_world import Running, mcp_session, running, text
from mcp_calls import INITIALIZE
from pydantic import ValidationError
from starlette.datastructures import Headers

from bigmind.config import Settings
from bigmind.gateway.auth import Identity, Logins
from bigmind.memory import api_tokens
from bigmind.models import ts_ago
from bigmind.web.origins import Origins

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}
HOUR = 3600.0


@pytest.fixture
def gateway(settings_for: Callable[[str], Settings]) -> Iterator[Running]:
    with running(settings_for("gateway"), free_port()) as gw:
        yield gw


@contextlib.contextmanager
def logged_in(gw: Running, secret: str) -> Iterator[httpx2.Client]:
    """A browser-like client holding a login cookie made from ``secret``."""
    with httpx2.Client(base_url=gw.url, follow_redirects=False) as web:
        made = web.post("/login", data={"token": secret, "next": "/"})
        assert made.status_code == 303 and "bigmind_login=" in made.headers["set-cookie"]
        yield web


def csrf(web: httpx2.Client) -> str:
    home = web.get("/")
    assert home.status_code == 200
    return home.text.split('name="csrf" value="')[1].split('"')[0]


def new_fact(gw: Running, secret: str, fact: str) -> int:
    made = httpx2.post(
        f"{gw.url}/api/v1/facts",
        json={"category": "decision", "fact": fact},
        headers={"Authorization": f"Bearer {secret}"},
    )
    assert made.status_code == 201
    return int(made.json()["fact"]["id"])


def forget(web: httpx2.Client, fact_id: int, token: str) -> httpx2.Response:
    return web.post(f"/forget/fact/{fact_id}", data={"csrf": token, "confirm": "yes"})


def shut_out(web: httpx2.Client, fact_id: int, token: str) -> None:
    """The login no longer opens pages (GET → the login page) nor posts forms (POST → 401)."""
    page = web.get("/facts")
    assert page.status_code == 303 and page.headers["location"].startswith("/login?next=")
    assert forget(web, fact_id, token).status_code == 401


def test_a_revoked_tokens_login_ends_at_its_next_request(gateway: Running) -> None:
    secret, other = gateway.token("alice"), gateway.token("alice")
    kept = new_fact(gateway, secret, "Payments use Kafka")
    gone = new_fact(gateway, secret, "Builds run on GitHub Actions")
    with logged_in(gateway, secret) as web, logged_in(gateway, other) as second:
        token = csrf(web)
        assert forget(web, gone, token).status_code == 303  # the form works while it lasts
        assert gateway.rt.store_of("alice").facts.get(gone) is None
        api_tokens.revoke(gateway.rt.store.db, _id(gateway, secret))  # this token only
        shut_out(web, kept, token)
        assert gateway.rt.store_of("alice").facts.get(kept) is not None
        assert web.get("/").status_code == 303  # ended for good, not just once
        assert second.get("/facts").status_code == 200  # a login from another token lives on


def _id(gw: Running, secret: str) -> str:
    found = api_tokens.check(gw.rt.store.db, secret)
    assert found is not None
    return found.id


def test_an_expired_tokens_login_ends(gateway: Running) -> None:
    secret = gateway.token("alice", days=30)
    fact = new_fact(gateway, secret, "Payments use Kafka")
    with logged_in(gateway, secret) as web:
        token = csrf(web)
        db = gateway.rt.store.db
        with db.transaction() as tx:
            tx.execute(
                "UPDATE api_tokens SET expires_at = ? WHERE id = ?",
                (ts_ago(seconds=5), _id(gateway, secret)),
            )
        shut_out(web, fact, token)
    assert gateway.rt.store_of("alice").facts.get(fact) is not None


def test_a_removed_users_login_ends(gateway: Running) -> None:
    secret = gateway.token("alice")
    with logged_in(gateway, secret) as web:
        token = csrf(web)
        db = gateway.rt.store.db.maintenance()
        with db.transaction() as tx:  # what removing alice from the database leaves: nothing
            (user,) = tx.execute("SELECT id FROM users WHERE username = ?", ("alice",))
            for table in ("directory_topics", "directory_cards", "api_tokens", "users"):
                key = "id" if table == "users" else "user_id"
                tx.execute(f"DELETE FROM {table} WHERE {key} = ?", (user["id"],))
        shut_out(web, 1, token)


def test_the_cookie_lasts_no_longer_than_the_login(
    settings_for: Callable[[str], Settings],
) -> None:
    settings = settings_for("gateway").model_copy(update={"login_max_hours": 3})
    with running(settings, free_port()) as gw:
        page = httpx2.get(f"{gw.url}/login")
        assert "3 hours unused, after 3 hours in all" in page.text
        made = httpx2.post(f"{gw.url}/login", data={"token": gw.token("alice"), "next": "/"})
        assert made.status_code == 303
        assert "Max-Age=10800;" in made.headers["set-cookie"]


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def test_a_login_ends_after_its_absolute_lifetime_however_much_it_is_used() -> None:
    clock = Clock()
    logins = Logins(max_hours=24, clock=clock)
    cookie, seconds = logins.open(Identity("alice", "token:t1", "t1"))
    assert seconds == 24 * HOUR
    for _ in range(23):  # used every hour: the idle limit never bites
        clock.now += HOUR
        assert logins.get(cookie) is not None
    clock.now += HOUR
    assert logins.get(cookie) is None
    assert logins.get(cookie) is None  # and stays gone


def test_a_login_ends_after_twelve_hours_unused() -> None:
    clock = Clock()
    logins = Logins(max_hours=100, clock=clock)
    cookie, _ = logins.open(Identity("alice", "token:t1", "t1"))
    clock.now += 12 * HOUR - 1
    assert logins.get(cookie) is not None
    clock.now += 12 * HOUR - 1
    assert logins.get(cookie) is not None  # used: twelve more hours from then
    clock.now += 12 * HOUR
    assert logins.get(cookie) is None


def test_a_login_from_a_jwt_ends_at_its_exp() -> None:
    clock = Clock()
    logins = Logins(max_hours=24, clock=clock)
    cookie, seconds = logins.open(Identity("carol", "jwt:x|u-42", expires=clock.now + 600))
    assert seconds == 600
    clock.now += 599
    assert logins.get(cookie) is not None
    clock.now += 1
    assert logins.get(cookie) is None
    _, seconds = logins.open(Identity("carol", "jwt:x|u-42", expires=clock.now + 48 * HOUR))
    assert seconds == 24 * HOUR  # a long-lived JWT still ends with BIGMIND_LOGIN_MAX_HOURS


# -- origins ---------------------------------------------------------------------------------


def mcp(gw: Running, token: str, body: object = INITIALIZE, **headers: str) -> httpx2.Response:
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {token}", **headers}
    return httpx2.post(f"{gw.url}/mcp", json=body, headers=headers)


async def test_mcp_from_a_foreign_origin_is_403_before_any_tool_runs(gateway: Running) -> None:
    secret = gateway.token("alice")
    opened = mcp(gateway, secret)
    assert opened.status_code == 200
    session = {"Mcp-Session-Id": opened.headers["mcp-session-id"]}
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "memory_store_fact", "arguments": {"category": "fact", "fact": "evil"}},
    }
    for origin in ("http://evil.example", "null", f"{gateway.url}.evil.example", "not a url"):
        refused = mcp(gateway, secret, call, Origin=origin, **session)
        assert refused.status_code == 403, origin
        assert refused.json()["error"]["type"] == "forbidden"
    assert mcp(gateway, "bm_" + "x" * 43, Origin="http://evil.example").status_code == 403
    async with mcp_session(gateway.url, secret) as s:  # no Origin: an ordinary MCP client
        stats = json.loads(text(await s.call_tool("memory_get_stats", {})))
    assert stats["counts"]["facts"] == 0  # the refused call stored nothing
    scrape = httpx2.get(f"{gateway.url}/metrics").text.splitlines()
    assert any(
        ln.startswith("bigmind_http_refused_total{") and 'reason="origin"' in ln for ln in scrape
    )


@pytest.fixture
def listing(settings_for: Callable[[str], Settings]) -> Iterator[Running]:
    """A gateway whose BIGMIND_ALLOWED_ORIGINS lists https://app.example.com."""
    settings = settings_for("gateway").model_copy(
        update={"allowed_origins": "https://app.example.com"}
    )
    with running(settings, free_port()) as gw:
        yield gw


def test_mcp_from_the_gateways_own_origin_or_an_allowed_one_is_served(listing: Running) -> None:
    gw = listing
    secret = gw.token("alice")
    assert mcp(gw, secret, Origin=gw.url).status_code == 200  # its public URL
    assert mcp(gw, secret, Origin="https://app.example.com").status_code == 200
    assert mcp(gw, secret, Origin="https://app.example.com:8443").status_code == 403
    assert mcp(gw, secret, Origin="http://app.example.com").status_code == 403
    # Behind a proxy: the Host it forwards is the gateway's own origin too.
    proxied = {"Host": "bigmind.example.com", "Origin": "https://bigmind.example.com"}
    assert mcp(gw, secret, **proxied).status_code == 200
    assert mcp(gw, secret, Host="bigmind.example.com", Origin=gw.url).status_code == 200
    other = {"Host": "bigmind.example.com", "Origin": "https://evil.example.com"}
    assert mcp(gw, secret, **other).status_code == 403


def test_a_login_posted_from_a_foreign_origin_is_403(gateway: Running) -> None:
    secret = gateway.token("alice")
    form = {"token": secret, "next": "/"}
    for origin in ("https://evil.example", "null"):
        refused = httpx2.post(f"{gateway.url}/login", data=form, headers={"Origin": origin})
        assert refused.status_code == 403 and "another site" in refused.text
        assert "set-cookie" not in refused.headers
    ours = httpx2.post(f"{gateway.url}/login", data=form, headers={"Origin": gateway.url})
    assert ours.status_code == 303 and "bigmind_login=" in ours.headers["set-cookie"]


def test_origins_compare_scheme_host_and_port() -> None:
    origins = Origins(["https://app.example.com"], "http://127.0.0.1:8700")

    def foreign(**headers: str) -> bool:
        return origins.foreign(Headers({k.replace("_", "-"): v for k, v in headers.items()}))

    assert not foreign()  # no Origin: not a browser's cross-origin request
    assert not foreign(origin="HTTPS://App.Example.com:443")
    assert not foreign(origin="http://127.0.0.1:8700", host="elsewhere")
    assert not foreign(origin="http://[::1]:8700", host="[::1]:8700")
    assert not foreign(origin="null", sec_fetch_site="same-origin")
    assert foreign(origin="null")
    assert foreign(origin="http://[::1]:8701", host="[::1]:8700")
    assert foreign(origin="ftp://app.example.com")
    assert foreign(origin="http://127.0.0.1:99999")


def test_allowed_origins_are_read_as_a_list_and_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIGMIND_ALLOWED_ORIGINS", " https://a.example.com/, http://b.example:81")
    monkeypatch.setenv("BIGMIND_LOGIN_MAX_HOURS", "8")
    settings = Settings()
    assert settings.origins == ["https://a.example.com", "http://b.example:81"]
    assert settings.login_max_hours == 8
    assert Settings(allowed_origins="").origins == []
    for bad in ("a.example.com", "https://a.example.com/app", "https://a.example.com:x", "*"):
        with pytest.raises(ValidationError):
            Settings(allowed_origins=bad)
    with pytest.raises(ValidationError):
        Settings(login_max_hours=0)


def test_the_pages_forms_take_the_allowed_origins_too(listing: Running) -> None:
    """One origin check for /mcp, /login and the pages' forms (web/origins.py)."""
    gw = listing
    secret = gw.token("alice")
    kept = new_fact(gw, secret, "Payments use Kafka")
    gone = new_fact(gw, secret, "Builds run on GitHub Actions")
    with logged_in(gw, secret) as web:
        form = {"csrf": csrf(web), "confirm": "yes"}
        foreign = {"Origin": "https://evil.example.com"}
        assert web.post(f"/forget/fact/{kept}", data=form, headers=foreign).status_code == 403
        listed = {"Origin": "https://app.example.com"}
        assert web.post(f"/forget/fact/{gone}", data=form, headers=listed).status_code == 303
    store = gw.rt.store_of("alice")
    assert store.facts.get(kept) is not None and store.facts.get(gone) is None
