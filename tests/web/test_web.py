"""The profile page's HTTP surface: every page on a seeded memory, changes, safety, errors."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from web_world import WebWorld, csrf_of, seed_world

from bigmind.config import Settings
from bigmind.memory import globalkb
from bigmind.memory.users import set_role
from bigmind.runtime import Runtime
from bigmind.storage.store import Store
from bigmind.web.profile_app import create_app

BASE = "http://127.0.0.1:7700"
PAGES = ["/", "/activity", "/topics", "/sessions", "/facts", "/hypotheses", "/people", "/global"]


def token(web: TestClient) -> str:
    return csrf_of(web.get("/facts").text)


@pytest.mark.parametrize("path", PAGES)
def test_every_page_renders_with_security_headers(web: TestClient, path: str) -> None:
    r = web.get(path)
    assert r.status_code == 200, r.text[:500]
    assert r.headers["content-type"].startswith("text/html")
    assert "script-src 'self'" in r.headers["content-security-policy"]
    assert r.headers["x-frame-options"] == "DENY"
    assert "<nav>" in r.text and 'aria-current="page"' in r.text
    assert "Traceback" not in r.text


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("/", "No profile yet"),
        ("/activity", "No data yet"),
        ("/topics", "No session topics yet"),
        ("/sessions", "No sessions yet"),
        ("/facts", "No facts here yet"),
        ("/hypotheses", "No resolved hypotheses yet"),
        ("/people", "Nobody yet"),
        ("/global", "No approved company knowledge yet"),
    ],
)
def test_a_new_users_pages_explain_what_will_fill_them(
    runtime: Runtime, path: str, says: str
) -> None:
    with TestClient(create_app(runtime), base_url=BASE) as web:
        r = web.get(path)
    assert r.status_code == 200 and says in r.text


def test_profile_shows_identity_tiers_badges_and_heatmap(web: TestClient, world: WebWorld) -> None:
    html = web.get("/").text
    assert f"<h1>{world.user}</h1>" in html
    assert "Pinned facts" in html and "Memory by tier" in html
    assert 'class="badge earned"' in html  # the seeded world has a first session at least
    assert html.count("data-date=") == 365


def test_activity_has_three_charts(web: TestClient) -> None:
    html = web.get("/activity").text
    for kind in ("chart-heatmap", "chart-bars", "chart-line"):
        assert kind in html
    assert re.search(r"\d+ sessions on \d+ days in the last 365", html)


def test_topics_link_to_filtered_lists(web: TestClient, world: WebWorld) -> None:
    html = web.get("/topics").text
    assert f'href="/sessions?topic={world.topic}"' in html
    assert f'href="/facts?category={world.category}"' in html
    listed = web.get(f"/sessions?topic={world.topic}").text
    assert f"Topic <b>{world.topic}</b>" in listed
    one_liners = re.findall(r'class="one-liner" href="/sessions/([^"]+)"', listed)
    assert one_liners, "the topic lists no session"


def test_sessions_paginate_and_link_to_detail(web: TestClient, world: WebWorld) -> None:
    first = web.get("/sessions").text
    assert "page 1 of" in first and 'rel="next"' in first
    second = web.get("/sessions?page=2").text
    assert 'rel="prev"' in second
    ids_1 = set(re.findall(r'href="/sessions/([0-9a-f-]{36})"', first))
    ids_2 = set(re.findall(r'href="/sessions/([0-9a-f-]{36})"', second))
    assert len(ids_1) == 25 and ids_2 and not ids_1 & ids_2
    detail = web.get(f"/sessions/{world.session_id}").text
    assert "Summary (Tier 2)" in detail and "No summary for this session" not in detail
    assert detail.count('class="chunk ') >= 2


def test_unknown_and_foreign_sessions_are_404_pages(
    web: TestClient, runtime: Runtime, settings_for: Callable[[str], Settings]
) -> None:
    r = web.get("/sessions/no-such-session")
    assert r.status_code == 404 and "404 · Not found" in r.text
    bob = Store(runtime.store.db, "bob")
    theirs = bob.start_session().session.id
    r = web.get(f"/sessions/{theirs}")
    assert r.status_code == 404
    r = web.get("/nowhere")
    assert r.status_code == 404 and "There is no page at /nowhere" in r.text


def test_stored_text_is_escaped(web: TestClient, world: WebWorld) -> None:
    html = web.get("/facts?q=render+unescaped").text
    assert "&lt;script&gt;alert(" in html
    assert "<script>alert(" not in html
    assert "&#34;quotes&#34;" in html or "&quot;quotes&quot;" in html


def test_fact_search_filter_and_status(web: TestClient, world: WebWorld, runtime: Runtime) -> None:
    f = runtime.store.get_fact(world.fact_id)
    word = max(re.findall(r"[A-Za-z]{6,}", f.fact), key=len)
    html = web.get(f"/facts?q={word}").text
    assert f'id="fact-{f.id}"' in html
    other = next(
        c
        for c in ("preference", "project", "workflow", "tooling", "team", "people")
        if c != f.category
    )
    html = web.get(f"/facts?q={word}&category={other}").text
    assert f'id="fact-{f.id}"' not in html
    deprecated = web.get("/facts?status=deprecated").text
    assert f'id="fact-{world.deprecated_fact_id}"' in deprecated
    assert 'class="deprecated"' in deprecated
    r = web.get("/facts?status=bogus")
    assert r.status_code == 400 and "status" in r.text


def test_deprecate_and_restore_a_fact(web: TestClient, world: WebWorld, runtime: Runtime) -> None:
    csrf = token(web)
    r = web.post(
        f"/facts/{world.fact_id}/deprecate",
        data={"csrf": csrf, "reason": "moved to uv", "back": "/facts?status=all"},
    )
    assert r.status_code == 303
    assert r.headers["location"] == f"/facts?status=all&notice=deprecated&id={world.fact_id}"
    fact = runtime.store.get_fact(world.fact_id)
    assert fact.deprecated and fact.deprecation_reason == "moved to uv"
    page = web.get(r.headers["location"]).text
    assert f"Fact #{world.fact_id} deprecated." in page
    r = web.post(f"/facts/{world.fact_id}/restore", data={"csrf": csrf, "back": "/facts"})
    assert r.status_code == 303
    assert not runtime.store.get_fact(world.fact_id).deprecated


def test_an_unknown_fact_action_is_404(web: TestClient, world: WebWorld, runtime: Runtime) -> None:
    r = web.post(f"/facts/{world.deprecated_fact_id}/undo", data={"csrf": token(web)})
    assert r.status_code == 404
    assert runtime.store.get_fact(world.deprecated_fact_id).deprecated


def test_deprecate_needs_a_reason(web: TestClient, world: WebWorld, runtime: Runtime) -> None:
    r = web.post(f"/facts/{world.fact_id}/deprecate", data={"csrf": token(web), "reason": " "})
    assert r.status_code == 400 and "reason" in r.text
    assert not runtime.store.get_fact(world.fact_id).deprecated


@pytest.mark.parametrize(
    ("data", "headers"),
    [
        ({"reason": "x"}, {}),  # no token
        ({"reason": "x", "csrf": "forged"}, {}),  # wrong token
        ({"reason": "x", "csrf": None}, {"origin": "http://evil.example"}),  # another site
        ({"reason": "x", "csrf": None}, {"origin": "null"}),
        ({"reason": "x", "csrf": None}, {"sec-fetch-site": "cross-site"}),
        ({"reason": "x", "csrf": None}, {"origin": BASE, "sec-fetch-site": "same-site"}),
    ],
)
def test_changes_without_a_valid_token_or_from_elsewhere_are_refused(
    web: TestClient,
    world: WebWorld,
    runtime: Runtime,
    data: dict[str, str | None],
    headers: dict[str, str],
) -> None:
    form = {k: (token(web) if v is None else v) for k, v in data.items()}
    r = web.post(f"/facts/{world.fact_id}/deprecate", data=form, headers=headers)
    assert r.status_code == 403
    assert "refused" in r.text or "security token" in r.text
    assert not runtime.store.get_fact(world.fact_id).deprecated


@pytest.mark.parametrize(
    "headers",
    [
        {"origin": BASE, "sec-fetch-site": "same-origin"},
        {"origin": "null", "sec-fetch-site": "same-origin"},  # a strict referrer policy
        {},  # an older client that sends neither
    ],
)
def test_changes_from_this_site_are_accepted(
    web: TestClient, world: WebWorld, runtime: Runtime, headers: dict[str, str]
) -> None:
    r = web.post(
        f"/facts/{world.fact_id}/deprecate",
        data={"csrf": token(web), "reason": "stale"},
        headers=headers,
    )
    assert r.status_code == 303
    assert runtime.store.get_fact(world.fact_id).deprecated


def test_get_on_a_change_is_405_and_a_foreign_host_is_refused(
    web: TestClient, world: WebWorld
) -> None:
    r = web.get(f"/facts/{world.fact_id}/deprecate")
    assert r.status_code == 405 and "Method not allowed" in r.text
    r = web.get("/", headers={"host": "attacker.example:7700"})  # DNS rebinding
    assert r.status_code == 400


@pytest.mark.parametrize("back", ["//evil.example/x", "/\\evil.example", "https://evil.example"])
def test_redirects_stay_on_this_site(web: TestClient, world: WebWorld, back: str) -> None:
    r = web.post(
        f"/facts/{world.fact_id}/deprecate",
        data={"csrf": token(web), "reason": "old", "back": back},
    )
    assert r.status_code == 303 and r.headers["location"].startswith("/facts?")


def test_curator_approves_and_deprecates_company_knowledge(
    web: TestClient, world: WebWorld, runtime: Runtime
) -> None:
    html = web.get("/global").text  # personal mode: the owner is admin, so a curator
    assert "Waiting for review" in html and f'id="entry-{world.pending_global_id}"' in html
    r = web.post(
        f"/global/{world.pending_global_id}/review",
        data={"csrf": csrf_of(html), "action": "approve", "notes": "checked", "back": "/global"},
    )
    assert r.status_code == 303
    entry = globalkb.get(runtime.store, world.pending_global_id)
    assert entry.status == "approved" and entry.review_notes == "checked"
    r = web.post(
        f"/global/{world.approved_global_id}/review",
        data={"csrf": csrf_of(html), "action": "deprecate"},
    )
    assert r.status_code == 303
    assert globalkb.get(runtime.store, world.approved_global_id).status == "deprecated"


def test_member_sees_own_queue_and_cannot_review(
    settings_for: Callable[[str], Settings], tmp_path: Path
) -> None:
    base = settings_for("alice")
    team = base.model_copy(update={"mode": "team"})
    rt = Runtime(team)
    try:
        world = seed_world(rt.store)
        with TestClient(create_app(rt), base_url=BASE) as web:
            html = web.get("/global").text
            assert ">Approve<" not in html
            assert f'id="entry-{world.pending_global_id}"' not in html  # bob's, not hers
            r = web.post(
                f"/global/{world.pending_global_id}/review",
                data={"csrf": csrf_of(web.get("/facts").text), "action": "approve"},
            )
            assert r.status_code == 403 and "curator" in r.text
            assert "team · member" in html
            set_role(rt.store.db, "alice", "curator")
            html = web.get("/global").text
            assert "team · curator" in html  # the header reads the role as it is now
            assert f'id="entry-{world.pending_global_id}"' in html and ">Approve<" in html
    finally:
        rt.close()


def test_team_directory_shows_activity_not_content(
    settings_for: Callable[[str], Settings],
) -> None:
    team = settings_for("alice").model_copy(update={"mode": "team"})
    rt = Runtime(team)
    try:
        seed_world(rt.store)
        bob = Store(rt.store.db, "bob", mode="team")
        bob.store_fact("project", "Bob's secret marmalade recipe uses quince")
        s = bob.start_session().session
        bob.end_session(s.id, "bob fixed the quince pipeline", "quince", None, "quince notes")
        with TestClient(create_app(rt), base_url=BASE) as web:
            html = web.get("/people").text
            assert "Directory" in html and "@bob" in html
            for path in PAGES:
                assert "quince" not in web.get(path).text, path
            assert "marmalade" not in web.get("/facts?q=quince+recipe").text
    finally:
        rt.close()


def test_personal_mode_has_no_directory(web: TestClient) -> None:
    assert "<h2>Directory</h2>" not in web.get("/people").text


def test_identity_endpoint(web: TestClient, settings: Settings) -> None:
    data = web.get("/api/identity").json()
    assert data["app"] == "bigmind" and data["user"] == "alice"
    assert data["database"] == settings.database


def test_unusable_database_is_a_clear_503_page(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    rt = Runtime(Settings(db_path=blocker / "memory.db", user="alice"))
    with TestClient(create_app(rt), base_url=BASE) as web:
        r = web.get("/")
    assert r.status_code == 503 and "Memory unavailable" in r.text
    assert "Traceback" not in r.text


def test_static_files_are_served(web: TestClient) -> None:
    assert "prefers-color-scheme" in web.get("/static/style.css").text
    assert web.get("/static/app.js").status_code == 200


@pytest.mark.parametrize(
    "path",
    [
        "/static/../../pyproject.toml",
        "/static/..%2f..%2f..%2fpyproject.toml",
        "/static/%2e%2e/%2e%2e/config.py",
        "/static//etc/passwd",
        "/sessions/..%2f..%2fetc%2fpasswd",
        "/facts/%00",
    ],
)
def test_no_path_leads_out_of_the_page(web: TestClient, path: str) -> None:
    r = web.get(path)
    assert r.status_code in (404, 400) and "[project]" not in r.text and "root:" not in r.text
    assert "Traceback" not in r.text


def test_a_form_too_large_or_too_many_fields_is_refused_unread(
    web: TestClient, world: WebWorld, runtime: Runtime
) -> None:
    big = {"csrf": token(web), "reason": "x" * 70_000}
    r = web.post(f"/facts/{world.fact_id}/deprecate", data=big)
    assert r.status_code == 400 and "larger than 64 KB" in r.text
    many = {"csrf": token(web), "reason": "old", **{f"f{i}": "1" for i in range(100)}}
    r = web.post(f"/facts/{world.fact_id}/deprecate", data=many)
    assert r.status_code == 400 and "too many fields" in r.text
    huge = web.post(
        "/facts/99999999999999999999/deprecate", data={"csrf": token(web), "reason": "old"}
    )
    assert huge.status_code == 404 and "Traceback" not in huge.text  # no row has that id
    assert not runtime.store.get_fact(world.fact_id).deprecated
