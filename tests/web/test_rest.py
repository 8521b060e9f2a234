"""The REST API under /api/v1 (bigmind/web/rest.py), through Starlette's test client behind a
stand-in for the gateway's authentication, on both backends. Every answer is checked against
the schema the served OpenAPI document gives for its route and status (tests/rest_client.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from openapi_spec_validator import validate
from rest_client import Api, api_as
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.testclient import TestClient

from bigmind import caller
from bigmind.config import Settings
from bigmind.memory.users import set_role
from bigmind.runtime import Runtime
from bigmind.web import rest
from bigmind.web import restschema as rs
from bigmind.web.restschema import PREFIX, Args, Endpoint, Reply


@pytest.fixture
def alice(runtime: Runtime) -> Iterator[Api]:
    with api_as(runtime, "alice") as api:
        yield api


@pytest.fixture
def bob(runtime: Runtime) -> Iterator[Api]:
    with api_as(runtime, "bob") as api:
        yield api


@pytest.fixture
def team(settings: Settings) -> Iterator[Runtime]:
    """A team's runtime: company knowledge waits for a curator."""
    rt = Runtime(settings.model_copy(update={"mode": "team"}))
    yield rt
    rt.close()


def _error(r: object, status: int, kind: str) -> str:
    assert getattr(r, "status_code", None) == status, getattr(r, "text", r)
    body = r.json()  # type: ignore[attr-defined]
    assert body["error"]["type"] == kind
    message: str = body["error"]["message"]
    assert message and "\n" not in message
    return message


# -- facts ---------------------------------------------------------------------------------------
def test_a_fact_is_stored_read_corrected_deprecated_and_forgotten(alice: Api) -> None:
    r = alice.post("/facts", {"category": "decision", "fact": "Payments use Kafka"})
    assert r.status_code == 201 and r.json()["created"] is True
    fact_id = r.json()["fact"]["id"]
    assert r.headers["location"] == f"{PREFIX}/facts/{fact_id}"
    assert alice.client.get(r.headers["location"]).json()["fact"]["fact"] == "Payments use Kafka"

    again = alice.post("/facts", {"category": "decision", "fact": "Payments use Kafka"})
    assert again.status_code == 200 and again.json()["created"] is False
    assert again.json()["fact"]["id"] == fact_id

    r = alice.patch(f"/facts/{fact_id}", {"fact": "Payments use Kafka 3", "reason": "upgrade"})
    assert r.status_code == 200 and r.json()["changed"] == ["fact"]
    detail = alice.get(f"/facts/{fact_id}").json()
    assert detail["fact"]["fact"] == "Payments use Kafka 3"
    assert [v["fact"] for v in detail["versions"]] == ["Payments use Kafka"]
    assert [v["version"] for v in detail["versions"]] == [1]

    r = alice.patch(f"/facts/{fact_id}", {"scope": "global"})
    assert r.json()["changed"] == ["scope"] and r.json()["fact"]["scope"] == "global"
    r = alice.patch(f"/facts/{fact_id}", {"restore_version": 1, "importance": 9})
    assert r.status_code == 422  # a restore is the whole earlier version: nothing else with it
    r = alice.patch(f"/facts/{fact_id}", {"restore_version": 1})
    assert r.json()["restored_version"] == 1 and r.json()["fact"]["fact"] == "Payments use Kafka"
    alice.patch(f"/facts/{fact_id}", {"restore_version": 2})
    found = alice.get("/facts/search", params={"q": "kafka"}).json()["results"]
    assert [h["id"] for h in found] == [fact_id]
    listed = alice.get("/facts").json()
    assert listed["total"] == 1 and listed["facts"][0]["fact"]["id"] == fact_id

    r = alice.post(f"/facts/{fact_id}/deprecate", {"reason": "moved to Pulsar"})
    assert r.json()["fact"]["deprecated"] == 1
    assert alice.get("/facts").json()["total"] == 0
    assert alice.get("/facts", params={"status": "deprecated"}).json()["total"] == 1

    r = alice.delete(f"/facts/{fact_id}")
    assert r.status_code == 200 and r.json()["removed"]["facts"] == 1
    _error(alice.get(f"/facts/{fact_id}"), 404, "not_found")
    assert alice.get("/facts", params={"status": "all"}).json()["total"] == 0


def test_recall_searches_every_kind_and_names_the_facts_bound_to_a_file(alice: Api) -> None:
    alice.post(
        "/facts",
        {"category": "bugfix", "fact": "Retry the broker connection", "files": ["pay/broker.py"]},
    )
    alice.post("/sessions", {"ide_hint": "tests"})
    r = alice.get("/recall", params={"q": "why does pay/broker.py retry the broker"})
    body = r.json()
    assert body["results"] and body["results"][0]["kind"] == "fact"
    assert [g["path"] for g in body["gotchas"]] == ["pay/broker.py"]
    only = alice.get("/recall", params={"q": "broker", "kinds": "chunk,summary"}).json()
    assert only["results"] == [] and only["gotchas"] == []


def test_a_paraphrase_of_a_correction_and_a_bad_value_are_refused_in_the_tools_words(
    alice: Api,
) -> None:
    msg = _error(
        alice.post("/facts", {"category": "Not a word!", "fact": "x"}), 422, "invalid_input"
    )
    assert "'category' must be a short lowercase word" in msg
    fact_id = alice.post("/facts", {"category": "decision", "fact": "Use ruff"}).json()["fact"][
        "id"
    ]
    msg = _error(alice.patch(f"/facts/{fact_id}", {}), 422, "invalid_input")
    assert "Nothing to change" in msg and "GET /api/v1/facts/{id}" in msg
    alice.post(f"/facts/{fact_id}/deprecate", {"reason": "old"})
    msg = _error(alice.post(f"/facts/{fact_id}/deprecate", {"reason": "old"}), 422, "invalid_input")
    assert "already deprecated" in msg


# -- sessions ------------------------------------------------------------------------------------
def test_a_session_is_started_listed_ended_and_read_with_its_summary(alice: Api) -> None:
    r = alice.post("/sessions", {"ide_hint": "curl", "focus": "payments"})
    assert r.status_code == 201
    sid = r.json()["session"]["id"]
    assert r.headers["location"] == f"{PREFIX}/sessions/{sid}"
    assert "BigMind" in r.json()["context"] or r.json()["context_tokens"] >= 0
    assert r.json()["session"]["ended_at"] is None
    assert alice.client.post("/api/v1/sessions").status_code == 201  # no body: no fields
    resumed = alice.post("/sessions", {"session_id": sid})
    assert resumed.status_code == 200 and resumed.json()["resumed"] is True

    listed = alice.get("/sessions").json()["sessions"]
    assert sid in [s["id"] for s in listed]
    r = alice.post(
        f"/sessions/{sid}/end",
        {"one_liner": "Chose Kafka", "topics": ["kafka", "payments"], "summary": "We chose Kafka."},
    )
    assert r.status_code == 200 and r.json()["was_open"] is True
    detail = alice.get(f"/sessions/{sid}").json()
    assert detail["session"]["one_liner"] == "Chose Kafka"
    assert detail["summary"]["summary"] == "We chose Kafka."
    assert alice.get("/sessions", params={"topic": "kafka"}).json()["sessions"]
    assert alice.get("/sessions", params={"topic": "other"}).json()["sessions"] == []
    _error(alice.get("/sessions/no-such-session"), 404, "not_found")


# -- privacy -------------------------------------------------------------------------------------
def test_one_user_never_reads_or_changes_anothers_memory(alice: Api, bob: Api) -> None:
    fact_id = alice.post("/facts", {"category": "decision", "fact": "Alice's broker is Kafka"})
    fid = fact_id.json()["fact"]["id"]
    sid = alice.post("/sessions", {}).json()["session"]["id"]

    for r in (
        bob.get(f"/facts/{fid}"),
        bob.patch(f"/facts/{fid}", {"fact": "Bob was here"}),
        bob.post(f"/facts/{fid}/deprecate", {"reason": "mine now"}),
        bob.delete(f"/facts/{fid}"),
        bob.get(f"/sessions/{sid}"),
        bob.post(f"/sessions/{sid}/end", {"one_liner": "closed by bob"}),
    ):
        _error(r, 404, "not_found")
    assert bob.get("/facts", params={"status": "all"}).json()["total"] == 0
    assert bob.get("/facts/search", params={"q": "broker kafka"}).json()["results"] == []
    assert bob.get("/recall", params={"q": "broker kafka"}).json()["results"] == []
    assert bob.get("/sessions").json()["sessions"] == []
    # Alice's memory is as she left it.
    assert alice.get(f"/facts/{fid}").json()["fact"]["fact"] == "Alice's broker is Kafka"
    assert alice.get(f"/sessions/{sid}").json()["session"]["ended_at"] is None


def test_the_user_is_the_one_the_gateway_authenticated_never_one_the_client_names(
    alice: Api, runtime: Runtime
) -> None:
    r = alice.post("/sessions", {"user_id": "bob"})
    assert "unknown field user_id" in _error(r, 400, "bad_request")
    r = alice.get("/facts", params={"user": "bob"})
    assert "unknown query parameter user" in _error(r, 400, "bad_request")
    alice.post(
        "/facts", {"category": "decision", "fact": "Stored as alice"}, headers={"X-User": "bob"}
    )
    with caller.acting_as("bob"):
        assert runtime.store.facts.count("all") == 0


# -- company knowledge ---------------------------------------------------------------------------
def test_company_knowledge_is_proposed_reviewed_by_a_curator_and_then_shared(team: Runtime) -> None:
    with api_as(team, "alice") as alice, api_as(team, "bob") as bob, api_as(team, "cy") as cy:
        r = alice.post(
            "/global", {"category": "standard", "title": "Retries", "content": "Back off."}
        )
        assert r.status_code == 201 and r.json()["entry"]["status"] == "pending"
        entry = r.json()["entry"]["id"]
        assert r.headers["location"] == f"{PREFIX}/global/{entry}"
        same = alice.post(
            "/global", {"category": "standard", "title": "Retries", "content": "Back off."}
        )
        assert same.status_code == 200 and same.json()["created"] is False

        # A member may neither approve nor see another member's proposal.
        _error(alice.post(f"/global/{entry}/review", {"action": "approve"}), 403, "forbidden")
        _error(bob.get(f"/global/{entry}"), 404, "not_found")
        assert bob.get("/global", params={"status": "pending"}).json()["own_only"] is True
        assert bob.get("/global", params={"status": "pending"}).json()["entries"] == []

        assert cy.get("/global").json()["entries"] == []  # cy's first call makes the user
        set_role(team.store.db, "cy", "curator")
        assert [
            e["id"] for e in cy.get("/global", params={"status": "pending"}).json()["entries"]
        ] == [entry]
        r = cy.post(f"/global/{entry}/review", {"action": "approve", "notes": "good"})
        assert r.json()["entry"]["status"] == "approved"
        assert r.json()["entry"]["source_session"] is None  # the promoter's private memory

        listed = bob.get("/global").json()["entries"]
        assert [e["id"] for e in listed] == [entry]
        assert [
            h["id"]
            for h in bob.get("/global/search", params={"q": "retries back off"}).json()["results"]
        ] == [entry]
        msg = _error(cy.post(f"/global/{entry}/review", {"action": "reject"}), 422, "invalid_input")
        assert "not pending" in msg
        r = cy.post(f"/global/{entry}/review", {"action": "deprecate"})
        assert r.json()["entry"]["status"] == "deprecated"
        assert bob.get("/global").json()["entries"] == []

        second = alice.post(
            "/global", {"category": "pattern", "title": "Idempotency keys", "content": "Always."}
        )
        rejected = cy.post(f"/global/{second.json()['entry']['id']}/review", {"action": "reject"})
        assert rejected.json()["entry"]["status"] == "deprecated"


def test_the_directory_answers_who_worked_on_a_topic_never_from_content(team: Runtime) -> None:
    with api_as(team, "alice") as alice, api_as(team, "bob") as bob:
        started = alice.post("/sessions", {})
        sid = started.json()["session"]["id"]
        alice.post("/facts", {"category": "decision", "fact": "Zanzibar tokens expire hourly"})
        alice.post(f"/sessions/{sid}/end", {"one_liner": "Kafka work", "topics": ["kafka"]})
        found = bob.get("/directory", params={"topic": "kafka"}).json()["experts"]
        assert [e["username"] for e in found] == ["alice"]
        assert found[0]["topics"][0]["topic"] == "kafka"
        assert bob.get("/directory", params={"topic": "zanzibar"}).json()["experts"] == []
        cards = bob.get("/directory").json()["cards"]
        assert {c["username"] for c in cards} >= {"alice", "bob"}
        _error(bob.get("/directory", params={"limit": 0}), 400, "bad_request")


# -- requests that cannot be read ----------------------------------------------------------------
def test_a_request_that_cannot_be_read_is_a_400_in_one_line(alice: Api) -> None:
    post = alice.client.post
    cases = {
        "not valid JSON": post(
            "/api/v1/facts", content=b"{nope", headers={"content-type": "application/json"}
        ),
        "must be a JSON object": post("/api/v1/facts", json=["decision", "x"]),
        "missing required field fact": post("/api/v1/facts", json={"category": "decision"}),
        "unknown field facts (did you mean fact?)": post(
            "/api/v1/facts", json={"category": "d", "facts": "x"}
        ),
        "'importance' must be an integer from 1 to 10": post(
            "/api/v1/facts", json={"category": "d", "fact": "x", "importance": "high"}
        ),
        "NUL": post("/api/v1/facts", json={"category": "d", "fact": "a\x00b"}),
        "64 bits": post("/api/v1/facts", json={"category": "d", "fact": "x", "importance": 2**70}),
        "lone UTF-16 surrogate": post(
            "/api/v1/facts",
            content=b'{"category": "d", "fact": "\\ud800"}',
            headers={"content-type": "application/json"},
        ),
        "'limit' must be an integer from 1 to 100": alice.client.get("/api/v1/recall?q=x&limit=0"),
        "Give the query parameter 'q' once": alice.client.get("/api/v1/recall?q=x&q=y"),
        "takes no query parameters": alice.client.get("/api/v1/facts/1?verbose=1"),
        "missing required query parameter q": alice.client.get("/api/v1/recall"),
    }
    for said, r in cases.items():
        assert said in _error(r, 400, "bad_request"), (said, r.text)


def test_a_body_over_the_servers_limit_is_a_413_and_not_json_a_415(settings: Settings) -> None:
    rt = Runtime(settings.model_copy(update={"max_request_bytes": 64 * 1024}))
    try:
        with api_as(rt, "alice") as api:
            big = {"category": "decision", "fact": "x" * (70 * 1024)}
            _error(api.client.post("/api/v1/facts", json=big), 413, "request_too_large")
            chunked = iter([b'{"category": "decision", "fact": "', b"y" * 70_000, b'"}'])
            r = api.client.post(
                "/api/v1/facts", content=chunked, headers={"content-type": "application/json"}
            )
            _error(r, 413, "request_too_large")
            r = api.client.post(
                "/api/v1/facts", content=b"fact=x", headers={"content-type": "text/plain"}
            )
            _error(r, 415, "unsupported_media_type")
            assert rt.store.facts.count("all") == 0
    finally:
        rt.close()


def test_unknown_routes_methods_and_ids_answer_in_the_error_shape(alice: Api) -> None:
    _error(alice.client.get("/api/v1/nowhere"), 404, "not_found")
    _error(alice.client.put("/api/v1/facts"), 405, "method_not_allowed")
    for bad in ("abc", "0", "99999999999999999999999", "%2342"):
        _error(alice.client.get(f"/api/v1/facts/{bad}"), 404, "not_found")
    _error(alice.client.get("/api/v1/global/7"), 404, "not_found")


# -- the document --------------------------------------------------------------------------------
def test_the_openapi_document_is_valid_and_describes_every_route(
    alice: Api, runtime: Runtime
) -> None:
    doc = alice.doc
    validate(doc)  # openapi-spec-validator: OpenAPI 3.1
    assert doc["openapi"] == "3.1.0"
    assert doc["components"]["securitySchemes"]["bearer"] == {"type": "http", "scheme": "bearer"}
    assert doc["security"] == [{"bearer": []}]
    served = {
        (method.lower(), PREFIX + route.path)
        for route in rest.routes(runtime)
        if isinstance(route, Route)
        for method in route.methods or ()
        if method != "HEAD"
    }
    documented = {(m, p) for p, ops in doc["paths"].items() for m in ops}
    assert served == documented
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            if op["operationId"] == "openapi":
                continue
            for code, response in op["responses"].items():
                assert "application/json" in response["content"], (method, path, code)
            names = {p["name"] for p in op["parameters"] if p["in"] == "path"}
            assert names == set(path.replace("}", "{").split("{")[1::2])


def test_the_documented_request_bodies_are_the_models_that_validate_them(alice: Api) -> None:
    new_fact = alice.doc["components"]["schemas"]["NewFact"]
    assert new_fact["additionalProperties"] is False
    assert new_fact["required"] == ["category", "fact"]
    assert new_fact["properties"]["importance"]["maximum"] == 10
    recall = alice.doc["paths"]["/api/v1/recall"]["get"]
    q = next(p for p in recall["parameters"] if p["name"] == "q")
    assert q["required"] is True and q["schema"]["maxLength"] == 2_000


def test_an_extra_endpoint_is_served_and_documented_and_a_bug_in_it_is_a_500(
    runtime: Runtime,
) -> None:
    """How the gateway adds a route (the directory): one Endpoint. A bug (not a BigMindError)
    answers 500 in the error shape, without the exception's text."""

    def crash(args: Args) -> Reply:
        raise RuntimeError("secret detail")

    extra = [Endpoint("GET", "/crash", "Fails", crash, rs.Error, tag="test")]
    app = Starlette(routes=[rest.mount(runtime, extra)])
    with TestClient(app, raise_server_exceptions=False) as c:
        assert "get" in c.get("/api/v1/openapi.json").json()["paths"]["/api/v1/crash"]
        r = c.get("/api/v1/crash")
    assert "secret detail" not in _error(r, 500, "internal_error")


def test_with_the_model_a_paraphrase_is_known_and_recall_goes_by_meaning(
    sem_runtime: Runtime,
) -> None:
    from model_fixture import ready

    with api_as(sem_runtime, "alice") as api:
        first = api.post(
            "/facts",
            {"category": "preference", "fact": "The user prefers pytest for all Python tests"},
        )
        ready(sem_runtime)
        r = api.post(
            "/facts",
            {
                "category": "preference",
                "fact": "The user prefers pytest for all of the Python tests",
            },
        )
        assert r.status_code == 201 and r.json()["created"] is True
        ready(sem_runtime)  # checked by meaning in the background: the older merged into it
        merged = api.get(f"/facts/{first.json()['fact']['id']}").json()["fact"]
        assert merged["deprecation_reason"] == f"merged into #{r.json()['fact']['id']}"
        found = api.get("/recall", params={"q": "Which testing library?", "mode": "semantic"})
        assert found.json()["note"] is None
        assert "pytest" in found.json()["results"][0]["text"]


def test_a_request_works_in_the_project_its_header_names(alice: Api) -> None:
    pay = {"BigMind-Project": "git@github.com:acme/payments.git"}
    web = {"BigMind-Project": "github.com/acme/web"}
    r = alice.post("/facts", {"category": "decision", "fact": "Payments use Kafka"}, headers=pay)
    fact = r.json()["fact"]
    assert (fact["project"], fact["scope"]) == ("github.com/acme/payments", "project")
    alice.post("/facts", {"category": "preference", "fact": "Answers stay short"}, headers=pay)

    def found(headers: dict[str, str]) -> list[str]:
        params = {"q": "kafka payments answers short", "scope": "project"}
        hits = alice.get("/facts/search", params=params, headers=headers).json()["results"]
        return sorted(h["text"] for h in hits)

    assert found(pay) == ["Answers stay short", "Payments use Kafka"]
    assert found(web) == ["Answers stay short"]  # a preference is global; the decision is not
    named = alice.post(
        "/facts", {"category": "decision", "fact": "Use Vite"}, headers={"BigMind-Project": "web"}
    )
    assert named.json()["fact"]["project"] == "name:web"


def test_over_real_http_concurrent_users_each_see_only_their_own(runtime: Runtime) -> None:
    """uvicorn on 127.0.0.1, plain HTTP, four users writing and reading at once: the user each
    request was authenticated as follows it into the worker thread that runs it."""
    import json
    import urllib.request
    from concurrent.futures import ThreadPoolExecutor

    from rest_client import served

    def send(base: str, user: str, method: str, path: str, body: object = None) -> object:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(base + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {user}")
        req.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.loads(r.read())

    def work(base: str, user: str) -> list[str]:
        for i in range(10):
            send(base, user, "POST", "/facts", {"category": "decision", "fact": f"{user} fact {i}"})
        page = send(base, user, "GET", "/facts?per_page=100")
        assert isinstance(page, dict)
        return sorted(f["fact"]["fact"] for f in page["facts"])

    users = ["ann", "ben", "cat", "dan"]
    with served(runtime) as base, ThreadPoolExecutor(len(users)) as pool:
        seen = dict(zip(users, pool.map(lambda u: work(base, u), users), strict=True))
    for user in users:
        assert seen[user] == sorted(f"{user} fact {i}" for i in range(10))


# -- behind the real gateway ---------------------------------------------------------------------
@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_through_the_gateway_the_token_decides_the_user(
    settings_for: Callable[[str], Settings],
) -> None:
    """`bigmind serve --http`'s app on 127.0.0.1, plain HTTP: no token is a 401 in the API's
    error shape; each token's user sees their own facts, and what REST stored MCP recalls."""
    import httpx2
    from conftest import free_port
    from gateway_world import mcp_session, running, text

    with running(settings_for("gateway"), free_port()) as gw:
        api = f"{gw.url}/api/v1"
        alice, bob = gw.token("alice"), gw.token("bob")
        r = httpx2.get(f"{api}/facts")
        assert r.status_code == 401 and r.json()["error"]["type"] == "unauthorized"

        def as_(token: str) -> dict[str, str]:
            return {"Authorization": f"Bearer {token}"}

        r = httpx2.post(
            f"{api}/facts",
            json={"category": "decision", "fact": "Payments use RabbitMQ"},
            headers={**as_(alice), "X-BigMind-User": "bob"},
        )
        assert r.status_code == 201
        assert httpx2.get(f"{gw.url}{r.headers['location']}", headers=as_(alice)).status_code == 200
        assert httpx2.get(f"{gw.url}{r.headers['location']}", headers=as_(bob)).status_code == 404
        assert httpx2.get(f"{api}/facts", headers=as_(bob)).json()["total"] == 0
        assert httpx2.get(f"{api}/openapi.json", headers=as_(bob)).json()["openapi"] == "3.1.0"
        async with mcp_session(gw.url, alice) as session:
            found = await session.call_tool("memory_search_facts", {"query": "payments broker"})
            assert "RabbitMQ" in text(found)
