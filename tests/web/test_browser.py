"""The profile page in a real browser: Debian's headless chromium driven by Playwright.

The app is the real one (uvicorn on 127.0.0.1 via ``profile_server(rt).url()``) over a seeded memory
(tests/web_world.py). These tests check what HTTP-level tests cannot: the pages render without
console errors, failed requests or script errors under the strict Content-Security-Policy, the
charts have a size, the forms work when clicked, stored text stays text, and the small script
does its job. Each page is also saved as a PNG (SCREENSHOT_DIR, or .artifacts/screenshots).

No browser is ever downloaded: without /usr/bin/chromium (``apt-get install chromium``) the
module is skipped.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from web_world import SCRIPT_FACT, WebWorld, seed_world

from bigmind.config import Settings
from bigmind.memory import globalkb
from bigmind.memory.users import set_role
from bigmind.runtime import Runtime
from bigmind.web.profile_server import profile_server

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists():
    pytest.skip(
        f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium) "
        "to run the browser tests",
        allow_module_level=True,
    )
pytest.importorskip("playwright.sync_api", reason="pip install playwright")
from playwright.sync_api import Browser, Dialog, Page, expect, sync_playwright  # noqa: E402

# The data layer runs on both backends elsewhere.
pytestmark = [pytest.mark.sqlite_only, pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[2]
# CI sets SCREENSHOT_DIR (.ci/run) so the screenshots survive as test artifacts.
ARTIFACTS = Path(os.environ.get("SCREENSHOT_DIR") or ROOT / ".artifacts" / "screenshots")
ARTIFACTS = ARTIFACTS.resolve()
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
PAGES = {
    "/": None,  # the user's name, from the world
    "/activity": "Activity",
    "/topics": "Topics",
    "/sessions": "Sessions",
    "/facts": "Facts",
    "/hypotheses": "Hypotheses",
    "/people": "People",
    "/global": "Company knowledge",
}
SEARCH = "form.search input[type=search]"


@dataclass
class Tab:
    """One browser page at the app, with everything that went wrong on it."""

    page: Page
    base: str = ""
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    def open(self, path: str) -> None:
        response = self.page.goto(self.base + path.lstrip("/"))
        assert response is not None and response.status == 200, (path, response)

    def assert_clean(self) -> None:
        """No console error, script error, failed or refused request, or dialog so far, and
        the page runs no script but the one legitimate file."""
        assert self.console_errors == [], self.console_errors
        assert self.page_errors == [], self.page_errors
        assert self.failed == [], self.failed
        assert self.dialogs == [], self.dialogs
        scripts = self.page.locator("script")
        assert scripts.count() == 1 and scripts.get_attribute("src") == "/static/app.js"

    def shot(self, name: str, *, full_page: bool = True) -> Path:
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=full_page)
        assert path.stat().st_size > 5_000, path  # a real picture, not a blank one
        return path


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def tab(browser: Browser) -> Iterator[Tab]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(10_000)
    page = context.new_page()
    t = Tab(page)
    page.on(
        "console",
        lambda m: m.type == "error" and t.console_errors.append(f"{m.text} ({m.location['url']})"),
    )
    page.on("pageerror", lambda e: t.page_errors.append(str(e)))
    page.on("requestfailed", lambda r: t.failed.append(f"{r.method} {r.url}: {r.failure}"))
    page.on(
        "response",
        lambda r: r.status >= 400 and t.failed.append(f"{r.request.method} {r.url}: {r.status}"),
    )

    def dialog(d: Dialog) -> None:
        t.dialogs.append(f"{d.type}: {d.message}")
        d.dismiss()

    page.on("dialog", dialog)
    yield t
    context.close()


@pytest.fixture
def served(runtime: Runtime, world: WebWorld, tab: Tab) -> Tab:
    """``tab`` pointed at the real profile page of the seeded ``runtime``."""
    tab.base = profile_server(runtime).url()
    assert tab.base.startswith("http://127.0.0.1:")
    return tab


def distinctive_word(text: str) -> str:
    return max(re.findall(r"[A-Za-z]{6,}", text), key=len)


def search_facts(tab: Tab, words: str) -> None:
    """Type into the search box and press Enter, as a user would."""
    box = tab.page.locator(SEARCH)
    box.fill(words)
    box.press("Enter")
    tab.page.wait_for_url(re.compile(r"/facts\?q="))


# -- every page ---------------------------------------------------------------------------
@pytest.mark.parametrize("path", list(PAGES))
def test_every_page_renders_cleanly(served: Tab, world: WebWorld, path: str) -> None:
    served.open(path)
    heading = PAGES[path] or world.user
    expect(served.page.locator("h1").first).to_contain_text(heading)
    expect(served.page.locator(f'header nav a[href="{path}"]')).to_have_attribute(
        "aria-current", "page"
    )
    # The stylesheet applied (not just loaded): the sticky header and the card backgrounds.
    position = served.page.eval_on_selector("header.top", "e => getComputedStyle(e).position")
    assert position == "sticky"
    for svg in served.page.locator("svg.chart").all():
        box = svg.bounding_box()
        assert box is not None and box["width"] > 50 and box["height"] > 20, (path, box)
    served.shot("page-" + (path.strip("/") or "profile"))
    served.assert_clean()


def test_activity_charts_render(served: Tab) -> None:
    served.open("/activity")
    page = served.page
    cells = page.locator("svg.chart-heatmap rect[data-date]")
    expect(cells).to_have_count(365)
    sized = cells.evaluate_all(
        "rs => rs.filter(r => { const b = r.getBoundingClientRect();"
        " return b.width > 3 && b.height > 3; }).length"
    )
    assert sized == 365
    # Levels are coloured by the stylesheet: an active year shows several distinct fills.
    fills = set(cells.evaluate_all("rs => rs.map(r => getComputedStyle(r).fill)"))
    assert len(fills) >= 3, fills
    expect(cells.first).to_be_visible()
    expect(cells.last).to_be_visible()
    for kind in ("heatmap", "bars", "line"):
        chart = page.locator(f"svg.chart-{kind}")
        expect(chart).to_be_visible()
        box = chart.bounding_box()
        assert box is not None and box["width"] > 200 and box["height"] > 60, (kind, box)
    bars = page.locator("svg.chart-bars rect.bar")
    assert bars.count() > 0
    assert max(bars.evaluate_all("rs => rs.map(r => r.getBoundingClientRect().height)")) > 10
    served.shot("activity-charts")
    served.assert_clean()


# -- sessions -----------------------------------------------------------------------------
def test_click_through_to_a_session(served: Tab, world: WebWorld) -> None:
    served.open("/sessions")
    page = served.page
    link = page.locator(f'a.one-liner[href="/sessions/{world.session_id}"]')
    for _ in range(10):  # it may be on a later page: follow "Older →"
        if link.count():
            break
        page.get_by_role("link", name="Older →").click()
        page.wait_for_load_state()
    else:
        pytest.fail(f"session {world.session_id} is on no page of /sessions")
    one_liner = link.inner_text()
    link.click()
    page.wait_for_url(f"**/sessions/{world.session_id}")
    expect(page.locator("h1.one-liner")).to_have_text(one_liner)
    summary = page.locator("section.card", has=page.get_by_role("heading", name="Summary (Tier 2)"))
    expect(summary).to_be_visible()
    assert len(summary.locator(".summary").inner_text().strip()) > 20
    chunks = page.locator("article.chunk")
    assert chunks.count() >= 2
    expect(page.locator("article.chunk", has_text="flagged:").first).to_be_visible()
    # The world's script fact was learned here: shown as text, never run.
    expect(page.locator("ul.facts li", has_text='<script>alert("xss")</script>')).to_be_visible()
    served.shot("session-detail")
    served.assert_clean()
    page.get_by_role("link", name="← Sessions").click()
    expect(page.locator("h1")).to_have_text("Sessions")


# -- facts --------------------------------------------------------------------------------
def test_deprecate_and_restore_a_fact_by_clicking(
    served: Tab, world: WebWorld, runtime: Runtime
) -> None:
    fact = runtime.store.get_fact(world.fact_id)
    served.open("/facts")
    page = served.page
    search_facts(served, distinctive_word(fact.fact))
    row = page.locator(f"#fact-{fact.id}")
    expect(row).to_contain_text(fact.fact)

    # An empty reason: the browser refuses to submit (the input is required).
    url = page.url
    row.get_by_role("button", name="Deprecate").click()
    reason = row.locator("input[name=reason]")
    assert reason.evaluate("e => e.validity.valueMissing") is True
    page.wait_for_timeout(300)
    assert page.url == url and page.locator(".notice").count() == 0
    assert not runtime.store.get_fact(fact.id).deprecated

    reason.fill("moved to another service")
    row.get_by_role("button", name="Deprecate").click()
    expect(page.locator(".notice")).to_have_text(f"Fact #{fact.id} deprecated.")
    assert "notice=deprecated" in page.url and "q=" in page.url  # back on the same search
    stored = runtime.store.get_fact(fact.id)
    assert stored.deprecated and stored.deprecation_reason == "moved to another service"
    expect(page.locator(f"#fact-{fact.id}")).to_have_count(0)  # active facts only

    page.locator("select[name=status]").select_option("deprecated")  # re-submits by itself
    page.wait_for_url(re.compile(r"status=deprecated"))
    row = page.locator(f"#fact-{fact.id}")
    expect(row).to_have_class("deprecated")
    expect(row).to_contain_text("deprecated: moved to another service")
    served.shot("fact-deprecated")
    row.get_by_role("button", name="Restore").click()
    expect(page.locator(".notice")).to_have_text(f"Fact #{fact.id} restored.")
    assert not runtime.store.get_fact(fact.id).deprecated
    served.assert_clean()


def test_forget_a_fact_by_clicking(served: Tab, world: WebWorld, runtime: Runtime) -> None:
    fact = runtime.store.get_fact(world.fact_id)
    served.open("/facts")
    page = served.page
    search_facts(served, distinctive_word(fact.fact))
    search_url = page.url
    page.locator(f"#fact-{fact.id}").get_by_role("link", name="Forget").click()
    page.wait_for_url(re.compile(rf"/forget/fact/{fact.id}\?back="))
    expect(page.locator("h1")).to_have_text(f"Forget fact #{fact.id}?")
    expect(page.locator(".forget-what")).to_contain_text(fact.fact[:40])
    served.shot("forget-confirm")
    # The box is required: the browser does not submit without it.
    page.get_by_role("button", name="Forget for good").click()
    page.wait_for_timeout(300)
    assert "/forget/fact/" in page.url and runtime.store.facts.get(fact.id) is not None
    page.get_by_label("I understand this cannot be undone").check()
    page.get_by_role("button", name="Forget for good").click()
    expect(page.locator(".notice")).to_have_text(
        "Forgotten for good: it is gone from the database."
    )
    assert page.url.startswith(search_url.split("?")[0]) and "q=" in page.url  # back on the search
    expect(page.locator(f"#fact-{fact.id}")).to_have_count(0)
    assert runtime.store.facts.get(fact.id) is None
    served.assert_clean()


def test_stored_script_is_shown_as_text(served: Tab, world: WebWorld) -> None:
    served.open("/facts")
    search_facts(served, "unescaped")
    page = served.page
    cell = page.locator(f"#fact-{world.script_fact_id} td.text")
    expect(cell).to_contain_text(SCRIPT_FACT)
    page.wait_for_timeout(200)  # a script that ran would open its dialog by now
    served.assert_clean()  # no dialog, and app.js is the page's only <script>
    assert page.evaluate("document.querySelectorAll('td.text script').length") == 0


def test_slash_focuses_search_and_category_resubmits(served: Tab, world: WebWorld) -> None:
    served.open("/facts")
    page = served.page
    box = page.locator(SEARCH)
    page.locator("h1").click()  # focus on the page, not a field
    expect(box).not_to_be_focused()
    page.keyboard.press("/")
    expect(box).to_be_focused()
    assert box.input_value() == ""  # the key focused the box; it typed nothing
    page.keyboard.type("service")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"q=service"))
    rows = page.locator("table.facts td a.cat")
    assert len(set(rows.all_inner_texts())) > 1  # "auth service" facts of every category
    page.locator("select[name=category]").select_option(world.category)
    page.wait_for_url(re.compile(rf"category={world.category}"))
    assert "q=service" in page.url
    expect(page.locator("select[name=category]")).to_have_value(world.category)
    categories = rows.all_inner_texts()
    assert categories and set(categories) == {world.category}
    served.assert_clean()


# -- company knowledge --------------------------------------------------------------------
def approve(tab: Tab, entry_id: int, notes: str) -> None:
    page = tab.page
    entry = page.locator(f"section.queue #entry-{entry_id}")
    entry.locator("input[name=notes]").fill(notes)
    entry.get_by_role("button", name="Approve").click()
    expect(page.locator(".notice")).to_have_text(f"Company entry #{entry_id} approved.")
    approved = page.locator("section.card", has=page.get_by_role("heading", name="Approved"))
    expect(approved.locator(f"#entry-{entry_id}")).to_be_visible()
    expect(page.locator(f"section.queue #entry-{entry_id}")).to_have_count(0)


def test_curator_approves_a_company_entry(served: Tab, world: WebWorld, runtime: Runtime) -> None:
    served.open("/global")  # personal mode: the owner is admin, so a curator
    page = served.page
    expect(page.locator("section.queue h2")).to_contain_text("Waiting for review")
    approve(served, world.pending_global_id, "checked with the team")
    entry = globalkb.get(runtime.store, world.pending_global_id)
    assert entry.status == "approved" and entry.review_notes == "checked with the team"
    served.shot("global-approved")
    served.assert_clean()


def test_team_member_reviews_only_once_made_curator(
    settings_for: Callable[[str], Settings], tab: Tab
) -> None:
    rt = Runtime(settings_for("alice").model_copy(update={"mode": "team"}))
    try:
        world = seed_world(rt.store)
        tab.base = profile_server(rt).url()
        tab.open("/global")
        page = tab.page
        expect(page.locator("h1")).to_contain_text("Company knowledge")
        expect(page.get_by_role("button", name="Approve")).to_have_count(0)
        expect(page.locator(f"#entry-{world.pending_global_id}")).to_have_count(0)

        set_role(rt.store.db, "alice", "curator")
        page.reload()
        expect(page.locator("section.queue h2")).to_contain_text("Waiting for review")
        expect(
            page.locator(f"#entry-{world.pending_global_id}").get_by_role("button", name="Approve")
        ).to_be_visible()
        approve(tab, world.pending_global_id, "fine by me")
        assert globalkb.get(rt.store, world.pending_global_id).status == "approved"
        tab.assert_clean()
    finally:
        rt.close()
