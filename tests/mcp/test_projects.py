"""Project scope: which project a memory belongs to, and what each project sees.

Found without the agent doing anything (the client's roots, else the server's working
directory's git repository, else BIGMIND_PROJECT); the packet shows a project's memories and
the global ones, never another project's; search ranks this project first and marks others.
"""

from __future__ import annotations

import json
import os
import subprocess
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest
from fastmcp import Client
from fastmcp.client.transports import StdioTransport
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp_calls import BIGMIND, Cli, call, end, send
from starlette.testclient import TestClient

from bigmind import project
from bigmind.cli.main import main
from bigmind.config import Settings
from bigmind.errors import InvalidInput
from bigmind.mcp.server import build_server
from bigmind.memory import journal
from bigmind.memory.context import build_context
from bigmind.project import Project
from bigmind.runtime import Runtime
from bigmind.search.ranking import Recall
from bigmind.storage.store import Store
from bigmind.web.profile_app import create_app

pytestmark = pytest.mark.anyio


def make_repo(root: Path, remote: str | None = None) -> Path:
    """A git work tree as git leaves it (only what identification reads: .git/config)."""
    git = root / ".git"
    git.mkdir(parents=True)
    config = "[core]\n\trepositoryformatversion = 0\n"
    if remote:
        config += (
            f'[remote "origin"]\n\turl = {remote}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n'
        )
    (git / "config").write_text(config, encoding="utf-8")
    return root


# -- identity ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/Acme/payments.git",
        "https://user:token@github.com/Acme/payments",
        "git@github.com:Acme/payments.git",
        "ssh://git@github.com:22/Acme/payments.git",
        "ssh://git@GitHub.com/Acme/payments/",
    ],
)
def test_every_spelling_of_a_remote_is_one_project(url: str) -> None:
    assert project.normalise_remote(url) == "github.com/Acme/payments"


@pytest.mark.parametrize("url", ["/srv/git/payments.git", "file:///srv/git/payments.git", ""])
def test_a_local_remote_names_no_project(url: str) -> None:
    assert project.normalise_remote(url) is None


def test_two_clones_of_a_repository_share_a_project(tmp_path: Path) -> None:
    a = make_repo(tmp_path / "a" / "payments", "git@github.com:acme/payments.git")
    b = make_repo(tmp_path / "b" / "pay", "https://github.com/acme/payments")
    (a / "src" / "deep").mkdir(parents=True)
    pa, pb = project.repository(a / "src" / "deep"), project.repository(b)
    assert pa is not None and pb is not None
    assert pa.key == pb.key == "github.com/acme/payments"
    assert pa.name == "payments" and pa.root == str(a.resolve())


def test_a_repository_without_remote_is_known_by_its_path(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "scratch")
    found = project.repository(root)
    assert found == Project(f"path:{root.resolve()}", "scratch", str(root.resolve()))


def test_a_worktree_reads_its_main_repository_config(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main", "https://gitlab.com/team/api.git")
    gitdir = main / ".git" / "worktrees" / "feature"
    gitdir.mkdir(parents=True)
    (gitdir / "commondir").write_text("../..\n", encoding="utf-8")
    wt = tmp_path / "feature"
    wt.mkdir()
    (wt / ".git").write_text(f"gitdir: {gitdir}\n", encoding="utf-8")
    found = project.repository(wt)
    assert found is not None and found.key == "gitlab.com/team/api"


def test_outside_git_a_folder_is_its_own_project_and_the_setting_names_one(
    tmp_path: Path,
) -> None:
    plain = tmp_path / "notes"
    plain.mkdir()
    assert project.repository(plain) is None
    assert project.of_folder(plain).key == f"path:{plain.resolve()}"
    assert project.detect(plain, None) is None
    assert project.detect(plain, "infra") == Project("name:infra", "infra")
    repo = make_repo(tmp_path / "svc", "https://github.com/acme/svc")
    assert project.detect(plain, str(repo)) == project.repository(repo)
    assert project.detect(repo, "infra") == project.repository(repo)  # the directory wins


# -- what each project sees ------------------------------------------------------------------------
A = Project("github.com/acme/payments", "payments")
B = Project("github.com/acme/search", "search")


def test_facts_take_their_scope_from_the_category(store: Store) -> None:
    with project.using(A):
        code, _, _ = store.store_fact("codebase", "Payments retries webhooks 5 times")
        pref, _, _ = store.store_fact("preference", "Prefers pytest over unittest")
        chosen, _, _ = store.store_fact("decision", "Use UTC everywhere", scope="global")
    assert (code.project, code.scope) == (A.key, "project")
    assert (pref.project, pref.scope) == (A.key, "global")
    assert chosen.scope == "global"
    home = Store(store.db, "alice")  # no project at all: every fact is global
    with project.using(None):
        free, _, _ = home.store_fact("codebase", "A fact made outside any repository")
    assert (free.project, free.scope) == (None, "global")
    with pytest.raises(InvalidInput, match="scope"):
        with project.using(A):
            store.store_fact("codebase", "x", scope="team")


def test_the_packet_shows_this_project_and_global_memories_never_another(store: Store) -> None:
    with project.using(A):
        store.store_fact("decision", "The payments service uses RabbitMQ for refunds")
        store.store_fact("preference", "Answers in British English")
        sa = store.start_session().session
        store.end_session(sa.id, "Refund queue redesign", "refunds", None, None)
    with project.using(B):
        store.store_fact("decision", "The search service indexes with Tantivy")
        sb = store.start_session().session
        store.end_session(sb.id, "Tantivy index tuning", "search", None, None)
        packet = build_context(store).text
    assert "Tantivy" in packet and "British English" in packet
    assert "RabbitMQ" not in packet and "Refund queue" not in packet
    assert "in project `search`" in packet
    with project.using(A):
        other = build_context(store).text
    assert "RabbitMQ" in other and "Tantivy" not in other


def test_rows_from_before_projects_stay_visible_everywhere(store: Store) -> None:
    legacy, _, _ = store.store_fact("codebase", "Legacy fact from before projects")
    with project.using(A):
        assert "Legacy fact" in build_context(store).text
    with project.using(B):
        assert "Legacy fact" in build_context(store).text
    assert legacy.scope == "global"


def test_search_ranks_this_project_first_and_marks_the_others(store: Store) -> None:
    with project.using(A):
        store.store_fact("decision", "Deploys go through the blue green pipeline on Fridays")
        store.store_fact("decision", "Deploys of payments need two approvals")
    with project.using(B):
        mine, _, _ = store.store_fact("decision", "Deploys happen from the release branch")
        found = Recall(store, None).search("deploys", 10, ["fact"], mode="keyword").hits
        only = (
            Recall(store, None)
            .search("deploys", 10, ["fact"], mode="keyword", scope="project")
            .hits
        )
    assert found[0].id == mine.id and found[0].project is None
    assert [h.project for h in found[1:]] == [A.key, A.key]
    assert all("from project payments" in h.why for h in found[1:])
    assert [h.id for h in only] == [mine.id]
    with pytest.raises(InvalidInput, match="scope"):
        Recall(store, None).search("deploys", scope="mine")


def test_a_write_never_lands_in_another_projects_open_session(store: Store) -> None:
    with project.using(A):
        a = store.start_session().session
    with project.using(B):
        chunk, ref = store.append_chunk("We chose Tantivy", flag_reason="decision")
    assert ref.opened and ref.session.id != a.id and ref.session.project == B.key
    rows = store.db.query("SELECT project FROM conversation_chunks WHERE id = ?", (chunk.id,))
    assert rows[0]["project"] == B.key
    with project.using(A):
        _, back = store.append_chunk("Refunds stay on RabbitMQ")
    assert back.session.id == a.id and not back.opened


def test_the_same_text_in_two_projects_is_two_facts_but_a_global_one_is_shared(
    store: Store,
) -> None:
    with project.using(A):
        one, created_a, _ = store.store_fact("codebase", "Tests run with make test")
        pref, _, _ = store.store_fact("preference", "Prefers small commits")
    with project.using(B):
        two, created_b, _ = store.store_fact("codebase", "Tests run with make test")
        again, created_again, _ = store.store_fact("preference", "Prefers small commits")
    assert created_a and created_b and one.id != two.id
    assert not created_again and again.id == pref.id


def test_a_fact_changes_scope_later(store: Store) -> None:
    with project.using(A):
        f, _, _ = store.store_fact("codebase", "All services log JSON lines")
        glob = store.set_fact_scope(f.id, "global")
    assert glob.scope == "global"
    with project.using(B):
        assert "JSON lines" in build_context(store).text
        moved = store.set_fact_scope(f.id, "project")
    assert (moved.scope, moved.project) == ("project", B.key)
    with project.using(None), pytest.raises(InvalidInput, match="No project"):
        Store(store.db, "alice").set_fact_scope(f.id, "project")


def test_a_project_is_found_by_key_name_or_folder(store: Store, tmp_path: Path) -> None:
    with project.using(A):
        store.store_fact("codebase", "x")
    assert store.find_project(A.key) == Project(A.key, "payments")
    assert store.find_project("payments").key == A.key
    repo = make_repo(tmp_path / "svc", "https://github.com/acme/svc")
    assert store.find_project(str(repo)).key == "github.com/acme/svc"
    with pytest.raises(InvalidInput, match="Known projects: payments"):
        store.find_project("nowhere")


# -- through MCP clients -------------------------------------------------------------------------
@pytest.fixture
def repos(tmp_path: Path) -> tuple[Path, Path]:
    return (
        make_repo(tmp_path / "ws" / "payments", "git@github.com:acme/payments.git"),
        make_repo(tmp_path / "ws" / "search", "https://github.com/acme/search.git"),
    )


@pytest.fixture
def rooted(settings: Settings, runtime: Runtime) -> Callable[[Path], Cli]:
    """Clients of one server, each with its own workspace folder as its root (the MCP
    version today's clients speak: roots need its back-channel)."""

    def connect(folder: Path) -> Cli:
        return Client(build_server(settings, runtime), roots=[folder.as_uri()], mode="legacy")

    return connect


async def test_roots_name_the_project_of_every_call(
    rooted: Callable[[Path], Cli], repos: tuple[Path, Path]
) -> None:
    pay, search = repos
    connect = rooted
    async with connect(pay) as a:
        _, data = await call(
            a, "memory_store_fact", category="codebase", fact="Refunds use RabbitMQ"
        )
        assert data["project"] == "github.com/acme/payments" and data["scope"] == "project"
        text, _ = await call(a, "memory_start_session")
        assert "in project `payments`" in text
    async with connect(search) as b:
        _, data = await call(
            b, "memory_store_fact", category="codebase", fact="Search uses Tantivy"
        )
        assert data["project"] == "github.com/acme/search"
        text, _ = await call(b, "memory_get_context")
        assert "Tantivy" in text and "RabbitMQ" not in text
        hits, _ = await call(b, "memory_recall", query="RabbitMQ Tantivy", scope="all")
        assert "(other project: payments)" in hits
        _, only = await call(b, "memory_recall", query="RabbitMQ Tantivy", scope="project")
        assert ["Tantivy" in r["text"] for r in only["results"]] == [True]
        _, facts_only = await call(b, "memory_search_facts", query="uses", scope="project")
        assert ["Tantivy" in r["text"] for r in facts_only["results"]] == [True]
        await end(b, None, "Tantivy tuning")
        fact_id = data["fact_id"]
        text, moved = await call(b, "memory_update_fact", fact_id=fact_id, scope="global")
        assert text == f"Fact #{fact_id} is now global." and moved["scope"] == "global"
    async with connect(pay) as a:
        text, _ = await call(a, "memory_get_context")
        assert "Tantivy" in text  # global now: seen from every project


async def test_a_changed_root_moves_the_next_call(
    settings: Settings, runtime: Runtime, repos: tuple[Path, Path]
) -> None:
    pay, search = repos
    roots = [pay.as_uri()]
    async with Client(
        build_server(settings, runtime), roots=lambda _ctx: roots, mode="legacy"
    ) as c:
        _, one = await call(c, "memory_store_fact", category="codebase", fact="First fact")
        roots[:] = [search.as_uri()]
        with warnings.catch_warnings():  # deprecated by MCP 2026-07-28; clients still send it
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await c.send_roots_list_changed()
        _, two = await call(c, "memory_store_fact", category="codebase", fact="Second fact")
    assert one["project"] == "github.com/acme/payments"
    assert two["project"] == "github.com/acme/search"


async def test_without_roots_the_working_directory_names_the_project(
    client: Cli, runtime: Runtime
) -> None:
    expected = project.detect(os.getcwd(), None)
    _, data = await call(client, "memory_store_fact", category="codebase", fact="cwd fact")
    assert data["project"] == (expected.key if expected else None)


@pytest.mark.e2e
@pytest.mark.timeout(90)
def test_a_stdio_server_started_in_a_repository_scopes_to_it(
    repos: tuple[Path, Path], db_path: Path
) -> None:
    """Clients start stdio servers in the workspace: no roots needed."""
    pay, search = repos

    def serve_in(folder: Path, *calls: tuple[str, dict[str, object]]) -> list[dict[str, object]]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("BIGMIND_")}
        env.update(BIGMIND_DB_PATH=str(db_path), BIGMIND_EMBED_MODEL="off", BIGMIND_WEB="false")
        proc = subprocess.Popen(
            [str(BIGMIND), "serve"],
            cwd=folder,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        assert proc.stdout is not None
        send(proc, *calls)
        replies = [json.loads(proc.stdout.readline()) for _ in range(len(calls) + 1)]
        proc.communicate(timeout=30)
        return replies

    stored = serve_in(
        pay, ("memory_store_fact", {"category": "codebase", "fact": "Refunds use RabbitMQ"})
    )
    assert "payments" in str(stored[-1])
    seen = serve_in(search, ("memory_get_context", {}))
    text = str(seen[-1])
    assert "in project `search`" in text and "RabbitMQ" not in text


# -- the command line ----------------------------------------------------------------------------
def test_cli_search_and_recall_take_a_project(
    store: Store, capsys: pytest.CaptureFixture[str]
) -> None:
    with project.using(A):
        store.store_fact("decision", "Deploys of payments need two approvals")
    with project.using(B):
        store.store_fact("decision", "Deploys of search go out on Mondays")
    assert main(["search", "deploys", "--project", "search", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["results"]
    assert "Mondays" in hits[0]["text"] and hits[1]["project"] == A.key
    assert main(["recall", "deploys", "--project", "search", "--scope", "project", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["results"]
    assert [("Mondays" in h["text"]) for h in hits] == [True]
    assert main(["search", "deploys", "--project", "nowhere"]) != 0
    assert "Known projects:" in capsys.readouterr().err


# -- the profile page ----------------------------------------------------------------------------
def test_the_facts_page_filters_by_project(runtime: Runtime) -> None:
    store = runtime.store
    with project.using(A):
        store.store_fact("decision", "Refunds use RabbitMQ")
    with project.using(B):
        store.store_fact("decision", "Search uses Tantivy")
        store.store_fact("preference", "Prefers tabs")
    with TestClient(create_app(runtime), base_url="http://127.0.0.1") as web:
        page = web.get("/facts").text
        assert "RabbitMQ" in page and "Tantivy" in page
        assert 'value="github.com/acme/search"' in page and ">search (2)<" in page
        only = web.get("/facts", params={"project": B.key}).text
        assert "Tantivy" in only and "Prefers tabs" in only and "RabbitMQ" not in only
        assert "project search" in only
        found = web.get("/facts", params={"project": A.key, "q": "uses"}).text
        assert "RabbitMQ" in found and "Tantivy" not in found


def test_the_sessions_page_and_the_journal_follow_the_project(runtime: Runtime) -> None:
    store = runtime.store
    with project.using(A):
        a = store.start_session().session
        store.end_session(a.id, "Refund queue redesign", None, None, None)
        journal.add(store, "Refunds fail when the queue is full")
    with project.using(B):
        b = store.start_session().session
        store.end_session(b.id, "Tantivy index tuning", None, None, None)
        journal.add(store, "Tantivy merges are slow on small segments")
        mine = journal.list_(store, "open", 10, store.project_key)
    assert [h.hypothesis for h in mine] == ["Tantivy merges are slow on small segments"]
    with TestClient(create_app(runtime), base_url="http://127.0.0.1") as web:
        both = web.get("/sessions").text
        assert "Refund queue" in both and "Tantivy index" in both
        only = web.get("/sessions", params={"project": B.key}).text
        assert "Tantivy index" in only and "Refund queue" not in only


@pytest.mark.e2e
@pytest.mark.timeout(90)
async def test_a_stdio_client_with_roots_scopes_the_server_to_its_workspace(
    repos: tuple[Path, Path], db_path: Path, tmp_path: Path
) -> None:
    """A real stdio server started outside any repository: the client's roots decide."""
    pay, search = repos
    env = {k: v for k, v in os.environ.items() if not k.startswith("BIGMIND_")}
    env.update(BIGMIND_DB_PATH=str(db_path), BIGMIND_EMBED_MODEL="off", BIGMIND_WEB="false")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    def client(folder: Path) -> Cli:
        transport = StdioTransport(str(BIGMIND), ["serve"], env=env, cwd=str(elsewhere))
        return Client(transport, roots=[folder.as_uri()], mode="legacy")

    async with client(pay) as a:
        _, data = await call(a, "memory_store_fact", category="codebase", fact="Refunds use SQS")
    assert data["project"] == "github.com/acme/payments"
    async with client(search) as b:
        text, _ = await call(b, "memory_get_context")
    assert "in project `search`" in text and "SQS" not in text
