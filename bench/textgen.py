"""Deterministic synthetic engineering text for the benchmarks.

Every slot (tools, components, bugs, people, files, functions…) draws from its own
ranked word list with Zipf-like weights (weight of rank r ∝ 1 / r**s), so a few
words are everywhere and a long tail is rare, as in real notes. Identifiers
(function names, file paths, ticket numbers, versions) are composed from smaller
lists, which gives the full-text index a realistic long tail of distinct terms.
The same seed always yields the same text.
"""

from __future__ import annotations

import bisect
import itertools
import random
from collections.abc import Callable, Sequence

ZIPF_S = 1.1

# -- ranked vocabularies (most common first) -----------------------------------------------
TOOLS = """
pytest docker postgres ruff mypy redis github-actions fastapi sqlite kubernetes terraform
nginx poetry uv celery kafka react typescript pydantic sqlalchemy alembic django flask
prometheus grafana sentry webpack vite eslint prettier jest playwright helm elasticsearch
rabbitmq pandas numpy airflow dbt bigquery snowflake s3 lambda cloudfront ansible vault
consul envoy istio jenkins gradle maven tokio node bun deno opentelemetry datadog pgbouncer
memcached minio clickhouse duckdb httpx aiohttp uvicorn gunicorn hypothesis tox nox pre-commit
black isort bandit trivy dependabot renovate argo-cd flux spinnaker bazel cmake ninja
""".split()

COMPONENTS = """
auth-service billing-service api-gateway search-index checkout-flow notification-worker
rate-limiter session-cache admin-dashboard export-job import-pipeline feature-flags
websocket-server user-profile payment-gateway order-service inventory-service email-sender
report-generator audit-log scheduler cli ingestion-worker metrics-exporter config-loader
migration-runner webhook-dispatcher image-resizer pdf-renderer recommendation-engine
permissions-service tenant-router cache-warmer backup-job log-shipper health-checker
graphql-layer mobile-backend sync-engine queue-consumer file-uploader token-service
pricing-engine fraud-detector analytics-pipeline dashboard-api onboarding-flow sso-bridge
""".split()

BUGS = """
race-condition memory-leak deadlock timeout flaky-test off-by-one-error stale-cache
null-pointer-exception n+1-query connection-pool-exhaustion timezone-bug encoding-bug
missing-index unbounded-retry-loop double-charge lost-update broken-migration
cors-error ssl-handshake-failure oom-kill slow-query infinite-redirect silent-data-loss
integer-overflow unicode-normalisation-bug clock-skew split-brain thundering-herd
zombie-process file-descriptor-leak dangling-lock cache-stampede serialization-error
""".split()

PEOPLE = """
alice bob carol dave erin frank grace heidi ivan judy mallory niaj olivia peggy rupert
sybil trent victor walter yasmin zoe amir bea chen dmitri elena farid gwen hiro ines
jonas kemal lena mateo nadia oskar priya quentin rosa sami tomas uma vera wei xavier yusuf
""".split()

ACTIONS = """
fixed refactored migrated rewrote profiled benchmarked reverted deployed upgraded pinned
split merged cached indexed documented deprecated removed renamed vendored parallelised
simplified instrumented hardened sharded throttled debounced batched retried validated
""".split()

REASONS = [
    "it halves the p95 latency",
    "the team already knows it",
    "it avoids a network hop",
    "the licence is permissive",
    "it is easier to test in isolation",
    "the old approach kept timing out under load",
    "it removes a whole class of race conditions",
    "the vendor dropped support for the previous version",
    "it keeps the deploy artifact under fifty megabytes",
    "on-call asked for fewer moving parts",
    "the migration can be rolled back safely",
    "it cuts the cloud bill noticeably",
    "the error messages are far clearer",
    "it works offline on developer laptops",
    "the benchmark showed a threefold speedup",
    "security review flagged the alternative",
    "it matches what the mobile team uses",
    "cold starts dropped below a second",
    "the schema stays backwards compatible",
    "it needs no extra infrastructure",
]

TASKS = """
unit-tests integration-tests linting formatting type-checking packaging deployment
local-development load-testing code-review profiling logging tracing dependency-updates
database-migrations release-notes incident-response schema-design api-versioning
""".split()

CONCERNS = """
retries pagination authentication caching validation serialisation rate-limiting
idempotency batching backpressure encryption compression locking sharding throttling
""".split()

CAUSES = [
    "a missing await in the retry path",
    "two workers reading the same row without a lock",
    "a cache key that ignored the tenant id",
    "naive datetimes compared with aware ones",
    "an unbounded in-memory queue",
    "a connection never returned to the pool",
    "a default timeout of zero in the client",
    "an ORM query inside a loop",
    "the wrong collation on the index",
    "a stale feature flag left on in production",
    "a regex that backtracked catastrophically",
    "float rounding in the currency conversion",
    "a test that depended on wall-clock time",
    "a migration that rewrote the whole table",
    "a header dropped by the proxy",
]

FIXES = [
    "adding a unique constraint",
    "wrapping the update in a transaction",
    "switching to an advisory lock",
    "bounding the queue and shedding load",
    "adding the composite index",
    "making the handler idempotent",
    "passing an explicit timeout",
    "batching the lookups into one query",
    "pinning the dependency",
    "normalising everything to UTC",
    "freezing time in the test",
    "streaming the export instead of buffering it",
    "moving the work to a background job",
    "using decimal arithmetic",
]

STYLES = """
small-pull-requests type-hints-everywhere early-returns dataclasses-over-dicts
explicit-imports descriptive-commit-messages tests-before-fixes docstrings-on-public-apis
trunk-based-development squash-merges feature-flags-for-risky-changes
""".split()

TOPICS = """
testing performance database auth deployment ci refactoring bugfix api frontend infra
security observability billing search caching migration docs onboarding release
""".split()

VERBS = """
load parse save fetch build render validate sync flush merge resolve compute check
normalise encode decode retry schedule dispatch index export import migrate
""".split()

NOUNS = """
config user session token request response cache order invoice event batch report
schema payload record query index job queue tenant account price chunk fact
""".split()

DIRS = """
src/app src/api src/core src/workers src/db src/auth src/billing src/search lib tests
scripts infra/terraform deploy/k8s web/src web/components services/orders
""".split()

EXTS = ["py", "py", "py", "ts", "tsx", "sql", "yaml", "go", "rs", "toml"]

PERIODS = ["week", "month", "sprint", "quarter", "release", "spring", "autumn"]

FLAG_REASONS = [
    "decision",
    "bug fix",
    "root cause",
    "user preference",
    "constraint",
    "architecture",
    "gotcha",
    "performance finding",
]

FACT_CATEGORIES = [
    "decision",
    "codebase",
    "bugfix",
    "preference",
    "constraint",
    "convention",
    "workflow",
    "identity",
]


def _cum_weights(n: int, s: float = ZIPF_S) -> list[float]:
    return list(itertools.accumulate(1.0 / (r**s) for r in range(1, n + 1)))


def _words(tag: str) -> str:
    """Hyphenated vocabulary entries read as words in prose."""
    return tag.replace("-", " ")


class TextGen:
    """Zipf-weighted engineering prose, facts, session summaries and search queries."""

    def __init__(self, seed: int = 42) -> None:
        self.rng = random.Random(seed)
        self._slots: dict[str, tuple[Sequence[str], list[float]]] = {}
        self._prose: dict[str, list[str]] = {}
        # Composed identifiers: ~600 function names and ~900 file paths, in a seeded rank order.
        aux = random.Random(seed + 1)
        funcs = [f"{v}_{n}" for v in VERBS for n in NOUNS]
        aux.shuffle(funcs)
        modules = [*NOUNS, *funcs[:120]]
        files = [f"{d}/{m}.{aux.choice(EXTS)}" for d in DIRS for m in aux.sample(modules, 60)]
        aux.shuffle(files)
        for name, items in {
            "tool": TOOLS,
            "component": COMPONENTS,
            "bug": BUGS,
            "person": PEOPLE,
            "action": ACTIONS,
            "reason": REASONS,
            "task": TASKS,
            "concern": CONCERNS,
            "cause": CAUSES,
            "fix": FIXES,
            "style": STYLES,
            "topic": TOPICS,
            "func": funcs,
            "file": files,
            "period": PERIODS,
            "flag": FLAG_REASONS,
            "category": FACT_CATEGORIES,
        }.items():
            self._slots[name] = (items, _cum_weights(len(items)))
            self._prose[name] = [_words(x) for x in items]

    # -- primitives ------------------------------------------------------------------------
    def _rank(self, slot: str) -> int:
        _items, cw = self._slots[slot]
        return bisect.bisect_right(cw, self.rng.random() * cw[-1])

    def pick(self, slot: str) -> str:
        """A Zipf-weighted value of ``slot``, as stored (``auth-service``)."""
        return self._slots[slot][0][self._rank(slot)]

    def w(self, slot: str) -> str:
        """A Zipf-weighted value of ``slot`` as prose (``auth service``)."""
        return self._prose[slot][self._rank(slot)]

    def two(self, slot: str) -> tuple[str, str]:
        """Two different values of ``slot``, as prose."""
        a = self._rank(slot)
        b = self._rank(slot)
        while b == a:
            b = self._rank(slot)
        words = self._prose[slot]
        return words[a], words[b]

    def ticket(self) -> str:
        return f"BM-{int(self.rng.paretovariate(0.6)) % 9000 + 100}"

    def version(self) -> str:
        return f"{self.rng.randint(0, 5)}.{self.rng.randint(0, 30)}.{self.rng.randint(0, 12)}"

    def ms(self) -> int:
        return self.rng.choice([5, 10, 20, 50, 80, 100, 150, 200, 250, 500, 800, 1000, 2000])

    # -- sentences -------------------------------------------------------------------------
    def sentence(self) -> str:
        r = self.rng
        t1, t2 = self.two("tool")
        s = r.randrange(16)
        if s == 0:
            return f"We decided to use {t1} instead of {t2} for the {self.w('component')} because {self.pick('reason')}."
        if s == 1:
            return f"The {self.w('bug')} in the {self.w('component')} was caused by {self.pick('cause')}."
        if s == 2:
            return f"I fixed it by {self.pick('fix')} in {self.pick('file')} ({self.ticket()})."
        if s == 3:
            return f"{self.pick('person').title()} prefers {t1} over {t2} for {self.w('task')}."
        if s == 4:
            return f"`{self.pick('func')}()` in {self.pick('file')} handles {self.pick('concern')} for the {self.w('component')}."
        if s == 5:
            return f"The {self.w('component')} must stay under {self.ms()} ms at p95 after the {t1} upgrade to {self.version()}."
        if s == 6:
            return f"We {self.pick('action')} the {self.w('component')} and {self.pick('action')} `{self.pick('func')}` along the way."
        if s == 7:
            return f"Running {t1} locally reproduced the {self.w('bug')} about one time in {r.randint(3, 50)}."
        if s == 8:
            return f"{self.pick('person').title()} reviewed the change to {self.pick('file')} and asked for {self.w('style')}."
        if s == 9:
            return f"The root cause was {self.pick('cause')}, not {t1} itself."
        if s == 10:
            after = self.ms()
            return f"After {self.pick('fix')}, the {self.w('component')} p95 dropped from {after * r.randint(2, 9)} ms to {after} ms."
        if s == 11:
            return f"Keep {self.pick('concern')} inside the {self.w('component')}; the {self.w('component')} should not know about it."
        if s == 12:
            return f"Tests for `{self.pick('func')}` now use {t1} fixtures instead of hitting {t2}."
        if s == 13:
            return f"The {t1} config lives in {self.pick('file')}; change it there, not in the {self.w('component')}."
        if s == 14:
            return f"Rolled back {t1} {self.version()} because it broke {self.w('task')} on the {self.w('component')}."
        return f"Next step: revisit the {self.w('component')} and add a regression test for the {self.w('bug')}."

    def paragraph(self, lo: int, hi: int) -> str:
        return " ".join(self.sentence() for _ in range(self.rng.randint(lo, hi)))

    # -- records ---------------------------------------------------------------------------
    def fact(self) -> tuple[str, str]:
        """(category, fact) — one atomic statement."""
        cat = self.pick("category")
        t1, t2 = self.two("tool")
        comp = self.w("component")
        make: dict[str, Callable[[], str]] = {
            "decision": lambda: f"Use {t1} instead of {t2} for the {comp} because {self.pick('reason')}.",
            "codebase": lambda: f"`{self.pick('func')}` in {self.pick('file')} handles {self.pick('concern')} for the {comp}.",
            "bugfix": lambda: f"The {self.w('bug')} in the {comp} came from {self.pick('cause')}; fixed by {self.pick('fix')} ({self.ticket()}).",
            "preference": lambda: f"{self.pick('person').title()} prefers {t1} over {t2} for {self.w('task')}.",
            "constraint": lambda: f"The {comp} must answer within {self.ms()} ms at p95 and run on {t1} {self.version()} or later.",
            "convention": lambda: f"In {self.pick('file')} we follow {self.w('style')} and keep {self.pick('concern')} in the {comp}.",
            "workflow": lambda: f"Before merging changes to the {comp}, run {t1} and {t2} and ask {self.pick('person').title()} for review.",
            "identity": lambda: f"{self.pick('person').title()} owns the {comp} and is the contact for {self.w('task')}.",
        }
        return cat, make[cat]()

    def chunk(self) -> tuple[str, str, str | None]:
        """(role, content, flag_reason) — one flagged exchange, a few sentences long."""
        r = self.rng.random()
        role = "assistant" if r < 0.7 else ("user" if r < 0.95 else "system")
        flag = self.pick("flag") if self.rng.random() < 0.6 else None
        return role, self.paragraph(2, 9), flag

    def session_summary(self) -> dict[str, str]:
        comp = self.w("component")
        bug = self.w("bug")
        tool = self.w("tool")
        topics = sorted({self.pick("topic") for _ in range(self.rng.randint(1, 4))})
        return {
            "one_liner": f"{self.pick('action').title()} the {comp} ({bug}, {tool})"[:200],
            "topics": ",".join(topics),
            "outcome": self.sentence(),
            "summary": self.paragraph(4, 10),
            "key_facts": "\n".join(f"- {self.fact()[1]}" for _ in range(self.rng.randint(1, 4))),
            "code_refs": "\n".join(f"- {self.pick('file')}" for _ in range(self.rng.randint(1, 3))),
        }

    # -- queries ---------------------------------------------------------------------------
    def keyword_query(self) -> str:
        """1–3 keywords, as an agent types them."""
        slots = ["tool", "component", "bug", "func", "person", "concern", "file", "task"]
        n = self.rng.choice([1, 1, 2, 2, 2, 3])
        return " ".join(self.w(self.rng.choice(slots)) for _ in range(n))

    def question(self) -> str:
        """A natural-language question of roughly 6–40 words."""
        t1, t2 = self.two("tool")
        comp = self.w("component")
        bug = self.w("bug")
        head = self.rng.choice(
            [
                f"What did we decide about {t1} for the {comp}?",
                f"Do you remember how we fixed the {bug} in the {comp} last {self.pick('period')}?",
                f"Why did we pick {t1} over {t2}?",
                f"Who owns the {comp} and which file handles {self.pick('concern')}?",
                f"Which test runner does {self.pick('person').title()} prefer for {self.w('task')}?",
                f"What was the root cause of the {bug} we saw with {t1}?",
                f"Where does `{self.pick('func')}` live and what calls it?",
                f"Have we already tried {self.pick('fix')} for the {bug}?",
            ]
        )
        extra = self.rng.choice([0, 0, 1, 2])
        tails = [
            f" I think it was around the time we {self.pick('action')} the {self.w('component')}.",
            f" It might have been in {self.pick('file')} or somewhere near the {self.w('component')}.",
            f" {self.pick('person').title()} mentioned something about {self.pick('cause')}.",
            f" We were seeing p95 above {self.ms()} ms and the {self.w('bug')} kept coming back.",
        ]
        text = head + "".join(self.rng.choice(tails) for _ in range(extra))
        return " ".join(text.split()[:40])

    def queries(self, n: int) -> list[str]:
        """``n`` varied queries: half keywords, half natural-language questions."""
        return [self.keyword_query() if i % 2 == 0 else self.question() for i in range(n)]
