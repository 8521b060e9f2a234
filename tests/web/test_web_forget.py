"""The profile page's Forget buttons: a confirmation page that changes nothing, then a POST with
the CSRF token and a ticked box; and a fact's earlier versions, restorable from its row."""

from __future__ import annotations

import re
from html import escape
from urllib.parse import quote

from starlette.testclient import TestClient
from web_world import WebWorld, csrf_of

from bigmind.memory import correct, journal, people
from bigmind.runtime import Runtime

BASE = "http://127.0.0.1:7700"


def confirm_page(web: TestClient, html: str, kind: str, item: object) -> str:
    """Follow the Forget link of ``kind`` ``item`` on a page to its confirmation page."""
    links = re.findall(rf'href="(/forget/{kind}/{quote(str(item))}\?back=[^"]*)"', html)
    assert links, f"no Forget link for {kind} {item}"
    r = web.get(links[0].replace("&amp;", "&"))
    assert r.status_code == 200, r.text[:300]
    return r.text


def facts_page(web: TestClient, runtime: Runtime, fact_id: int) -> tuple[str, str]:
    """The facts page listing ``fact_id`` (a search for its longest word), and its address."""
    word = max(re.findall(r"[A-Za-z]{6,}", runtime.store.get_fact(fact_id).fact), key=len)
    path = f"/facts?q={word}"
    html = web.get(path).text
    assert f'id="fact-{fact_id}"' in html
    return html, path


def test_forget_a_fact_from_its_row(web: TestClient, world: WebWorld, runtime: Runtime) -> None:
    facts, _path = facts_page(web, runtime, world.fact_id)
    page = confirm_page(web, facts, "fact", world.fact_id)
    assert f"Forget fact #{world.fact_id}?" in page and "There is no undo" in page
    assert runtime.store.facts.get(world.fact_id) is not None  # looking changes nothing
    csrf = csrf_of(page)
    action = f"/forget/fact/{world.fact_id}"
    # Without the box ticked, with a forged token, from another site: refused, nothing gone.
    r = web.post(action, data={"csrf": csrf, "back": "/facts"})
    assert r.status_code == 400 and "Tick the box" in r.text
    r = web.post(action, data={"csrf": "forged", "confirm": "yes"})
    assert r.status_code == 403
    r = web.post(
        action, data={"csrf": csrf, "confirm": "yes"}, headers={"origin": "http://evil.example"}
    )
    assert r.status_code == 403
    assert web.get(action).status_code == 200  # GET is the confirmation page, never the change
    assert runtime.store.facts.get(world.fact_id) is not None
    r = web.post(action, data={"csrf": csrf, "confirm": "yes", "back": "/facts?status=all"})
    assert r.status_code == 303
    assert r.headers["location"] == f"/facts?status=all&notice=forgotten&id={world.fact_id}"
    assert runtime.store.facts.get(world.fact_id) is None
    after = web.get(r.headers["location"]).text
    assert "Forgotten for good" in after and f'id="fact-{world.fact_id}"' not in after
    assert web.get(action).status_code == 404


def test_forget_an_exchange_the_summary_and_the_session(
    web: TestClient, world: WebWorld, runtime: Runtime
) -> None:
    store, sid = runtime.store, world.session_id
    page = web.get(f"/sessions/{sid}").text
    chunk_id = int(re.findall(r'id="chunk-(\d+)"', page)[0])
    confirm = confirm_page(web, page, "chunk", chunk_id)
    r = web.post(
        f"/forget/chunk/{chunk_id}",
        data={"csrf": csrf_of(confirm), "confirm": "yes", "back": f"/sessions/{sid}"},
    )
    assert r.status_code == 303 and r.headers["location"].startswith(f"/sessions/{sid}?")
    assert store.chunks.get(chunk_id) is None
    page = web.get(f"/sessions/{sid}").text
    assert f'id="chunk-{chunk_id}"' not in page
    confirm = confirm_page(web, page, "summary", sid)
    web.post(f"/forget/summary/{sid}", data={"csrf": csrf_of(confirm), "confirm": "yes"})
    assert store.sessions.summary(sid) is None and store.sessions.get(sid) is not None
    page = web.get(f"/sessions/{sid}").text
    assert "No summary for this session" in page
    confirm = confirm_page(web, page, "session", sid)
    assert "saved exchange" in confirm and "Forget session" in confirm
    r = web.post(
        f"/forget/session/{sid}",
        data={"csrf": csrf_of(confirm), "confirm": "yes", "back": f"/sessions/{sid}"},
    )
    assert r.status_code == 303 and r.headers["location"].startswith("/sessions?notice=forgotten")
    assert store.sessions.get(sid) is None
    assert web.get(f"/sessions/{sid}").status_code == 404


def test_forget_a_hypothesis_and_a_person(
    web: TestClient, world: WebWorld, runtime: Runtime
) -> None:
    store = runtime.store
    h, _ = journal.add(store, "The nightly job fails on DST days", 0.6)
    p = people.remember(store, "mlee", "Min Lee", "DBA").person
    page = web.get("/hypotheses").text
    confirm = confirm_page(web, page, "hypothesis", h.id)
    r = web.post(f"/forget/hypothesis/{h.id}", data={"csrf": csrf_of(confirm), "confirm": "yes"})
    assert r.status_code == 303 and r.headers["location"].startswith("/hypotheses?")
    assert "The nightly job fails on DST days" not in web.get("/hypotheses").text
    page = web.get("/people").text
    confirm = confirm_page(web, page, "person", p.id)
    assert "@mlee" in confirm
    r = web.post(f"/forget/person/{p.id}", data={"csrf": csrf_of(confirm), "confirm": "yes"})
    assert r.status_code == 303 and "@mlee" not in web.get("/people").text


def test_a_corrected_facts_versions_show_and_restore(
    web: TestClient, world: WebWorld, runtime: Runtime
) -> None:
    store = runtime.store
    before = store.get_fact(world.fact_id).fact
    correct.update_fact(
        store, None, world.fact_id, fact=f"{before} (corrected)", reason="was wrong"
    )
    html, path = facts_page(web, runtime, world.fact_id)
    row = html[html.index(f'id="fact-{world.fact_id}"') :]
    row = row[: row.index("</tr>")]
    assert "edited 1×" in row and escape(before) in row
    assert "was wrong" in row and "Restore v1" in row
    r = web.post(
        f"/facts/{world.fact_id}/restore-version",
        data={"csrf": csrf_of(html), "version": "1", "back": path},
    )
    assert r.status_code == 303 and "notice=version-restored" in r.headers["location"]
    assert store.get_fact(world.fact_id).fact == before
    assert "back to an earlier version" in web.get(r.headers["location"]).text


def test_unknown_memories_have_no_confirmation_page(web: TestClient) -> None:
    assert web.get("/forget/fact/987654").status_code == 404
    assert web.get("/forget/session/nope").status_code == 404
    assert web.get("/forget/planet/1").status_code == 400
