"""The REST API's shapes: query parameters, request bodies and responses as pydantic models,
and the OpenAPI 3.1 document built from them.

Each endpoint of :mod:`bigmind.web.rest` names its models here; the same models validate what
a client sends and describe it in ``/api/v1/openapi.json``, so the document cannot drift from
what the API accepts. Responses are built as these models too (records are BigMind's own
dataclasses: :class:`~bigmind.models.Fact`, :class:`~bigmind.models.Session`…), and the tests
check every answer against the schema the document gives for it. Bounds come from
:mod:`bigmind.limits`, as the MCP tools' schemas do.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import JsonSchemaMode

from bigmind import __version__, limits
from bigmind.models import Fact, Hit, Session, Summary
from bigmind.service.colleagues import CARDS_MAX, Card, Expert
from bigmind.service.companykb import GlobalEntry
from bigmind.service.facts import Close, Rival, Version

PREFIX = "/api/v1"
PROJECT_HEADER = "BigMind-Project"  # the project a request works in (what roots are to MCP)
M = TypeVar("M", bound=BaseModel)


class Strict(BaseModel):
    """What a client sends: an unknown field is refused, as the tools refuse an unknown
    argument."""

    model_config = ConfigDict(extra="forbid")


class Out(BaseModel):
    """What the API answers."""

    model_config = ConfigDict(extra="forbid")


class Written(Out):
    redacted: dict[str, int] = Field(
        default_factory=dict,
        description="Secrets redacted before storing, by kind (the values are never shown).",
    )


# -- shared fields -------------------------------------------------------------------------------
Query = Annotated[
    str,
    Field(
        min_length=1,
        max_length=limits.QUERY,
        description="A question or keywords; natural language is fine.",
    ),
]
Limit = Annotated[int, Field(ge=1, le=limits.RESULTS, description="Maximum results.")]
Importance = Annotated[
    int, Field(ge=limits.IMPORTANCE[0], le=limits.IMPORTANCE[1], description="1 low … 10 critical.")
]
Confidence = Annotated[float, Field(ge=0.0, le=1.0, description="1.0 = stated by the user.")]
Scope = Literal["project", "global"]
SearchScope = Literal["all", "project"]
TextList = Annotated[
    list[str] | str | None, Field(description="A list, or the items comma-separated.")
]
Lines = Annotated[list[str] | str | None, Field(description="Bullet points, as a list or text.")]
FactIds = Annotated[
    list[Annotated[int, Field(ge=1, le=limits.ID_MAX)]] | str | None,
    Field(description="Fact ids, as a list or comma-separated."),
]


# -- query parameters ----------------------------------------------------------------------------
class RecallQuery(Strict):
    q: Query
    limit: Limit = 10
    kinds: str | None = Field(
        default=None,
        description="Comma-separated: any of fact, chunk, summary, hypothesis, person, global "
        "(default all).",
    )
    mode: Literal["hybrid", "semantic"] = Field(
        default="hybrid", description="hybrid: keywords and meaning; semantic: meaning only."
    )
    scope: SearchScope = "all"


class FactSearchQuery(Strict):
    q: Query
    limit: Limit = 10
    include_deprecated: bool = False
    scope: SearchScope = "all"


class FactListQuery(Strict):
    status: Literal["active", "deprecated", "all"] = "active"
    category: str | None = Field(default=None, max_length=limits.CATEGORY)
    page: int = Field(default=1, ge=1, le=100_000)
    per_page: int = Field(default=25, ge=1, le=limits.RESULTS)


class SessionListQuery(Strict):
    limit: Limit = 10
    topic: str | None = Field(
        default=None, max_length=limits.TOPIC, description="Only sessions tagged with it."
    )
    offset: int = Field(default=0, ge=0, le=limits.ID_MAX, description="Skip this many.")


class GlobalListQuery(Strict):
    category: str | None = Field(default=None, max_length=limits.CATEGORY)
    status: Literal["approved", "pending", "deprecated"] = "approved"
    limit: Limit = 20


class GlobalSearchQuery(Strict):
    q: Query
    limit: Limit = 5


class DirectoryQuery(Strict):
    topic: str | None = Field(
        default=None,
        max_length=limits.QUERY,
        description="Who worked on this? (without it: every card you may see)",
    )
    limit: int = Field(default=10, ge=1, le=CARDS_MAX, description="Maximum people.")


# -- request bodies ------------------------------------------------------------------------------
class NewFact(Strict):
    category: str = Field(description="preference, decision, codebase, constraint, bugfix…")
    fact: str = Field(description="One atomic, self-contained truth.")
    confidence: Confidence = 1.0
    session_id: str | None = Field(default=None, description="Default: the open session.")
    importance: Importance = 5
    scope: Scope | None = None
    files: TextList = None
    replaces: FactIds = Field(
        default=None,
        description='Active facts this one replaces: deprecated ("replaced by #N") and linked'
        " in the same transaction; one that is not refuses the request and nothing is stored."
        " Undo: PATCH /facts/{id} with replaces [].",
    )


class FactChange(Strict):
    fact: str | None = None
    category: str | None = None
    confidence: Annotated[float | None, Field(ge=0.0, le=1.0)] = None
    importance: Annotated[int | None, Field(ge=limits.IMPORTANCE[0], le=limits.IMPORTANCE[1])] = (
        None
    )
    reason: str | None = Field(default=None, description="Why it changed (kept in history).")
    restore_version: Annotated[int | None, Field(ge=1, le=limits.ID_MAX)] = None
    scope: Scope | None = None
    replaces: FactIds = Field(
        default=None,
        description="More facts this one replaces (deprecated, linked); [] restores every fact"
        " it replaced.",
    )


class Deprecation(Strict):
    reason: str = Field(description="Why it is no longer true.")


class NewSession(Strict):
    ide_hint: str | None = Field(default=None, description="The client, e.g. 'cursor'.")
    session_id: str | None = Field(default=None, description="Resume this session.")
    focus: str | None = Field(
        default=None,
        max_length=limits.QUERY,
        description="The task at hand: relevant memory comes first in the context.",
    )


class SessionEnd(Strict):
    one_liner: str = Field(description=f"Headline, ≤ {limits.ONE_LINER} characters.")
    topics: TextList = None
    outcome: str | None = None
    summary: str | None = Field(default=None, description="Narrative in Markdown.")
    key_facts: Lines = None
    code_refs: Lines = None
    importance: Importance = 5


class NewEntry(Strict):
    category: Literal["architecture", "standard", "decision", "pattern", "glossary"]
    title: str = Field(description=f"≤ {limits.TITLE} characters.")
    content: str = Field(description="Markdown, ideally ≤ 500 tokens.")
    importance: Importance = 5
    source_session: str | None = None


class Review(Strict):
    action: Literal["approve", "reject", "deprecate"] = Field(
        description="approve a pending (or deprecated) entry; reject a pending one; "
        "deprecate an approved one."
    )
    notes: str | None = None


# -- responses -----------------------------------------------------------------------------------
class Found(Out):
    results: list[Hit]
    note: str | None = Field(description="Why semantic search took no part, if it did not.")
    nothing_relevant: bool = Field(
        description="No result, or even the best is a weak match: nothing clearly answers."
    )


class Recalled(Found):
    failed_attempts: list[dict[str, Any]] = Field(
        description="Recorded failed approaches the question comes close to."
    )
    gotchas: list[dict[str, Any]] = Field(description="Facts bound to files the question names.")


class ListedFact(Out):
    fact: Fact
    session_one_liner: str | None
    versions: list[Version]
    rivals: list[Rival]


class FactPage(Out):
    facts: list[ListedFact]
    page: int
    per_page: int
    total: int
    pages: int


class FactDetail(Out):
    fact: Fact
    versions: list[Version] = Field(description="Earlier versions, oldest first.")


class FactStored(Written):
    fact: Fact
    created: bool = Field(description="False: the same fact was known (its id is returned).")
    files: list[str]
    session_id: str | None = Field(description="The session the fact belongs to.")
    retired: list[int] = Field(description="The facts it replaces (named in replaces).")
    close: list[Close] = Field(
        description="Active facts close in meaning (at most 3, most similar first), for the"
        " caller to judge: replace, correct or keep both. Empty while the model is not ready."
    )


class FactUpdated(Written):
    fact: Fact
    changed: list[str]
    replaced_version: int | None
    restored_version: int | None
    retired: list[int] = Field(default_factory=list, description="Facts it now replaces.")
    restored: list[int] = Field(
        default_factory=list, description="Facts restored: it no longer replaces them."
    )


class FactDeprecated(Written):
    fact: Fact


class Forgotten(Out):
    kind: str
    id: str
    removed: dict[str, int]
    kept: dict[str, list[str]] = Field(description="Memories kept without the forgotten link.")
    scrub: str


class SessionPage(Out):
    sessions: list[Session]


class SessionDetail(Out):
    session: Session
    summary: Summary | None
    chunk_ids: list[int]


class SessionStarted(Out):
    session: Session
    resumed: bool
    auto_closed: list[str]
    context: str = Field(description="The memory context packet (Markdown).")
    context_tokens: int


class SessionEnded(Written):
    session: Session
    was_open: bool
    retired_facts: list[int]


class EntryPage(Out):
    entries: list[GlobalEntry]
    own_only: bool = Field(description="True: a member sees only the entries they proposed.")


class Directory(Out):
    cards: list[Card] | None = Field(
        default=None, description="Without a topic: users, from session topics and counts only."
    )
    experts: list[Expert] | None = Field(
        default=None,
        description="With a topic: who worked on it (session topics, approved company "
        "knowledge they promoted), best first.",
    )


class EntryOut(Written):
    entry: GlobalEntry


class EntryProposed(EntryOut):
    created: bool = Field(description="False: the same entry was already proposed.")


class ErrorBody(Out):
    type: str = Field(description="not_found, forbidden, invalid_input, bad_request…")
    message: str


class Error(Out):
    error: ErrorBody


# -- endpoints -----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Args:
    """What one request brought, validated: its path parameters, query and body."""

    path: Mapping[str, str]
    query: BaseModel | None = None
    body: BaseModel | None = None

    def query_as(self, model: type[M]) -> M:
        assert isinstance(self.query, model)
        return self.query

    def body_as(self, model: type[M]) -> M:
        assert isinstance(self.body, model)
        return self.body


@dataclass(frozen=True, slots=True)
class Reply:
    model: BaseModel
    status: int = 200
    location: str | None = None  # a path under PREFIX


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One route: its method and path under :data:`PREFIX` (``{name}`` for a path
    parameter), what it takes and answers, and the function doing it."""

    method: Literal["GET", "POST", "PATCH", "DELETE"]
    path: str
    summary: str
    run: Callable[[Args], Reply]
    response: type[BaseModel]
    query: type[BaseModel] | None = None
    body: type[BaseModel] | None = None
    status: int = 200
    errors: tuple[int, ...] = ()
    tag: str = "memory"


PATH_PARAMS: dict[str, dict[str, Any]] = {
    "fact_id": {"type": "integer", "minimum": 1, "maximum": limits.ID_MAX},
    "entry_id": {"type": "integer", "minimum": 1, "maximum": limits.ID_MAX},
    "session_id": {"type": "string", "maxLength": limits.NAME},
}
REASONS = {
    200: "OK",
    201: "Created",
    400: "The request could not be read: bad JSON, an unknown or mistyped field",
    401: "No valid bearer token",
    403: "The authenticated user may not do this",
    404: "No such memory (or one of another user's)",
    413: "The body is longer than the server accepts",
    415: "The body is not JSON",
    422: "Read, but refused: a value out of range or a change that cannot be made",
    500: "A bug in BigMind: the server log says more",
    503: "The database is unavailable",
}
ALWAYS = (400, 401, 500, 503)


def _ref(model: type[BaseModel]) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{model.__name__}"}


def _json(model: type[BaseModel]) -> dict[str, Any]:
    return {"application/json": {"schema": _ref(model)}}


def _parameters(e: Endpoint, schemas: dict[str, Any]) -> list[dict[str, Any]]:
    out = [
        {"name": name, "in": "path", "required": True, "schema": PATH_PARAMS[name]}
        for name in PATH_PARAMS
        if "{" + name + "}" in e.path
    ]
    out.append(
        {
            "name": PROJECT_HEADER,
            "in": "header",
            "required": False,
            "schema": {"type": "string", "maxLength": limits.PATH},
            "description": "The project to work in: a repository's key (github.com/acme/pay), "
            "its git remote URL, or a name. Default: the server's own project.",
        }
    )
    if e.query is not None:
        schema = e.query.model_json_schema(ref_template="#/components/schemas/{model}")
        schemas.update(schema.pop("$defs", {}))
        required = set(schema.get("required", ()))
        for name, prop in schema["properties"].items():
            param: dict[str, Any] = {
                "name": name,
                "in": "query",
                "required": name in required,
                "schema": {k: v for k, v in prop.items() if k != "description"},
            }
            if "description" in prop:
                param["description"] = prop["description"]
            out.append(param)
    return out


def _components(models: set[type[BaseModel]]) -> dict[str, Any]:
    """Every model's JSON schema (draft 2020-12, which OpenAPI 3.1 uses), nested ones too."""
    schemas: dict[str, Any] = {}
    for model in sorted(models, key=lambda m: m.__name__):
        mode: JsonSchemaMode = "validation" if issubclass(model, Strict) else "serialization"
        schema = model.model_json_schema(ref_template="#/components/schemas/{model}", mode=mode)
        schemas.update(schema.pop("$defs", {}))
        schemas[model.__name__] = schema
    return schemas


def openapi(endpoints: list[Endpoint]) -> dict[str, Any]:
    """The OpenAPI 3.1 document of ``endpoints``, bearer authentication on every one."""
    paths: dict[str, dict[str, Any]] = {}
    models: set[type[BaseModel]] = {Error}
    extra: dict[str, Any] = {}
    for e in endpoints:
        models.add(e.response)
        op: dict[str, Any] = {
            "operationId": e.run.__name__,
            "summary": e.summary,
            "tags": [e.tag],
            "parameters": _parameters(e, extra),
            "responses": {str(e.status): {"description": REASONS[e.status]}},
        }
        op["responses"][str(e.status)]["content"] = _json(e.response)
        if e.status == 201:
            op["responses"]["201"]["headers"] = {
                "Location": {"description": "Where to GET it.", "schema": {"type": "string"}}
            }
            op["responses"]["200"] = {
                "description": "Already there: nothing added (a repeat), or a session resumed",
                "content": _json(e.response),
            }
        if e.body is not None:
            models.add(e.body)
            op["requestBody"] = {"required": True, "content": _json(e.body)}
        codes = {*ALWAYS, *e.errors, *((413, 415) if e.body is not None else ())}
        for code in sorted(codes):
            op["responses"][str(code)] = {"description": REASONS[code], "content": _json(Error)}
        paths.setdefault(PREFIX + e.path, {})[e.method.lower()] = op
    paths[PREFIX + "/openapi.json"] = {
        "get": {
            "operationId": "openapi",
            "summary": "This document",
            "tags": ["api"],
            "responses": {
                "200": {
                    "description": REASONS[200],
                    "content": {"application/json": {"schema": {"type": "object"}}},
                }
            },
        }
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "BigMind REST API",
            "version": __version__,
            "description": "BigMind's memory for tools that are not MCP clients: recall, "
            "facts, sessions and company knowledge of the authenticated user.",
        },
        "paths": paths,
        "components": {
            "schemas": {**extra, **_components(models)},
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"bearer": []}],
    }
