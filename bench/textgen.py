"""Deterministic synthetic engineering text for the benchmarks.

Realistic enough for full-text search to behave as on real notes:

* every slot (tools, components, bugs, people, classes, files…) is a ranked list
  drawn with Zipf–Mandelbrot weights ``1 / (rank + q) ** s``: a few values are
  everywhere, a long tail is rare;
* composed identifiers (``InvoiceBatchExporter``, ``ShardLeaseError``, file paths,
  hosts, commit hashes, ticket and PR numbers, versions, durations) give the index
  tens of thousands of distinct terms, as code-heavy notes have;
* each session has a *topic* (a handful of components, tools, people, files it
  is about) and its chunks mostly talk about that, so terms cluster by session
  instead of being spread evenly over the corpus;
* sentences come from ~40 templates mixing decisions, bugs, reviews and
  free-form filler built from a general engineering vocabulary.

The same seed always yields the same text.
"""

from __future__ import annotations

import bisect
import itertools
import random
from collections.abc import Callable, Sequence


def _split(text: str) -> list[str]:
    return text.split()


# -- vocabularies (most common first) ----------------------------------------------------------
TOOLS = _split(
    """
pytest docker postgres ruff mypy redis github-actions fastapi sqlite kubernetes terraform nginx
poetry uv celery kafka react typescript pydantic sqlalchemy alembic django flask prometheus
grafana sentry webpack vite eslint prettier jest playwright helm elasticsearch rabbitmq pandas
numpy airflow dbt bigquery snowflake s3 lambda cloudfront ansible vault consul envoy istio
jenkins gradle maven tokio node bun deno opentelemetry datadog pgbouncer memcached minio
clickhouse duckdb httpx aiohttp uvicorn gunicorn hypothesis tox nox pre-commit black isort
bandit trivy dependabot renovate argo-cd flux spinnaker bazel cmake ninja nats temporal
traefik caddy haproxy cassandra mongodb dynamodb cockroachdb timescaledb polars pyarrow
spark flink beam loki tempo jaeger k6 locust vitest cypress storybook tailwind nextjs svelte
"""
)

DOMAINS = _split(
    """
auth billing payment search checkout notification inventory pricing fraud analytics onboarding
export import report audit session token permission tenant order invoice shipping catalog
recommendation email sms webhook upload media image video pdf feed comment profile account
subscription refund ledger tax currency geo routing scheduling calendar chat presence metrics
logging tracing alerting config feature-flag experiment ranking indexing crawler sync backup
archive storage cdn dns proxy identity sso consent quota usage rating review loyalty coupon
"""
)

KINDS = _split(
    """
service worker api gateway dashboard pipeline job cache scheduler exporter client adapter store
queue consumer frontend backend cli library module controller repository
"""
)

BUGS = _split(
    """
race-condition memory-leak deadlock timeout flaky-test off-by-one-error stale-cache
null-pointer-exception n+1-query connection-pool-exhaustion timezone-bug encoding-bug
missing-index unbounded-retry-loop double-charge lost-update broken-migration cors-error
ssl-handshake-failure oom-kill slow-query infinite-redirect silent-data-loss integer-overflow
unicode-normalisation-bug clock-skew split-brain thundering-herd zombie-process
file-descriptor-leak dangling-lock cache-stampede serialization-error heisenbug
priority-inversion livelock starvation use-after-free buffer-overrun stack-overflow
pagination-drift phantom-read dirty-read write-skew retry-storm hot-partition
"""
)

PEOPLE = _split(
    """
alice bob carol dave erin frank grace heidi ivan judy mallory niaj olivia peggy rupert sybil
trent victor walter yasmin zoe amir bea chen dmitri elena farid gwen hiro ines jonas kemal lena
mateo nadia oskar priya quentin rosa sami tomas uma vera wei xavier yusuf aiko bruno chiara
diego emeka fatima goran hana ilya jana kofi leila marek nour omar paula radu sofia tariq
ursula vikram wanda ximena yara zeynep anders bianca cyrus daria esme felix giulia hamid
ingrid jamal katya lucas mira nikolai orla pavel rania stefan thea ugo valentina wiktor
"""
)

# General engineering vocabulary for free-form sentences.
NOUNS = _split(
    """
request response cache query index schema table row column batch job queue worker event message
payload record field value key token session user account tenant order invoice payment price
report file path config setting flag test fixture mock stub build release deploy rollout
migration transaction lock connection pool thread process container pod node cluster region
endpoint route handler middleware client server proxy gateway timeout retry backoff limit quota
metric alert dashboard log trace span sample error exception warning crash regression benchmark
latency throughput memory cpu disk network bandwidth buffer stream socket header cookie
certificate secret credential permission role policy scope audit snapshot backup replica shard
partition offset cursor page limit filter sort join view trigger constraint sequence counter
histogram percentile budget deadline estimate ticket issue branch commit patch diff review
comment docstring readme changelog version dependency package module function method class
interface protocol adapter plugin extension hook callback promise future coroutine loop
scheduler cron window interval checkpoint watermark lag consumer producer topic subscriber
publisher channel inbox outbox saga workflow state machine transition guard invariant contract
"""
)

VERBS = _split(
    """
cache retry validate parse serialize deserialize index migrate deploy rollback refactor split
merge rename extract inline batch stream buffer flush compress encrypt decrypt sign verify
authorize authenticate throttle debounce paginate sort filter aggregate partition shard
replicate backup restore snapshot profile benchmark trace log alert monitor patch upgrade
downgrade pin vendor bundle compile lint format test mock stub document deprecate remove
normalize sanitize escape encode decode hash lock unlock acquire release schedule dispatch
enqueue dequeue consume publish subscribe poll prefetch warm invalidate evict expire refresh
reconcile deduplicate backfill replay
"""
)

ADJECTIVES = _split(
    """
slow fast flaky stale broken missing duplicate async sync idempotent atomic eventual strict
lenient verbose noisy quiet cold warm hot large small nested optional required deprecated
legacy internal external public private shared global local remote transient persistent
concurrent sequential partial full incremental lazy eager blocking non-blocking
"""
)

ADVERBS = _split(
    """
silently intermittently consistently randomly gradually immediately eventually twice again
nightly hourly under-load in-production on-ci locally in-staging after-deploy
"""
)

REASONS = [
    "it halves the p95 latency",
    "the team already knows it",
    "it avoids a network hop",
    "the licence is permissive",
    "it is easier to test in isolation",
    "the old approach kept timing out under load",
    "it removes a whole class of race conditions",
    "the vendor dropped support for the previous version",
    "it keeps the deploy artifact small",
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
    "an environment variable missing in the container",
    "a retry without jitter",
    "an exception swallowed by a bare except",
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
    "adding jitter to the backoff",
    "re-raising with context",
]

TASKS = _split(
    """
unit-tests integration-tests linting formatting type-checking packaging deployment
local-development load-testing code-review profiling logging tracing dependency-updates
database-migrations release-notes incident-response schema-design api-versioning
"""
)

STYLES = _split(
    """
small-pull-requests type-hints-everywhere early-returns dataclasses-over-dicts explicit-imports
descriptive-commit-messages tests-before-fixes docstrings-on-public-apis trunk-based-development
squash-merges feature-flags-for-risky-changes
"""
)

TOPICS = _split(
    """
testing performance database auth deployment ci refactoring bugfix api frontend infra security
observability billing search caching migration docs onboarding release
"""
)

DIRS = _split(
    """
src/app src/api src/core src/workers src/db src/auth src/billing src/search lib tests scripts
infra/terraform deploy/k8s web/src web/components services/orders services/payments pkg/cache
cmd/server internal/store
"""
)

EXTS = ["py", "py", "py", "ts", "tsx", "sql", "yaml", "go", "rs", "toml"]
ENVS = ["prod", "staging", "dev", "canary", "eu", "us"]
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
BUILTIN_ERRORS = [
    "KeyError",
    "TimeoutError",
    "ValueError",
    "IntegrityError",
    "OperationalError",
    "ConnectionResetError",
    "AttributeError",
    "TypeError",
]

# Zipf–Mandelbrot parameters per slot: (s, q). Larger q flattens the head.
DEFAULT_SHAPE = (1.05, 2.0)
SHAPES = {"word": (1.0, 8.0), "noun": (1.0, 6.0), "verb": (1.0, 4.0), "class": (0.95, 4.0)}
TOPIC_SLOTS = {"component": 3, "tool": 3, "bug": 2, "person": 2, "file": 4, "class": 4, "func": 3}
TOPIC_STICKINESS = 0.65  # chance a slot in a session's text comes from the session's topic


def _cum_weights(n: int, s: float, q: float) -> list[float]:
    return list(itertools.accumulate(1.0 / (r + q) ** s for r in range(1, n + 1)))


def _prose(tag: str) -> str:
    """Hyphenated vocabulary entries read as words in prose."""
    return tag.replace("-", " ")


def _third_person(verb: str) -> str:
    if verb.endswith(("s", "sh", "ch", "x", "z")):
        return verb + "es"
    if verb.endswith("y") and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def _past(verb: str) -> str:
    if verb.endswith("e"):
        return verb + "d"
    if verb.endswith("y") and verb[-2] not in "aeiou":
        return verb[:-1] + "ied"
    return verb + "ed"


def _camel(*words: str) -> str:
    return "".join(w.replace("-", " ").title().replace(" ", "") for w in words)


Topic = dict[str, list[str]]


class TextGen:
    """Zipf-weighted engineering prose, facts, session summaries and search queries."""

    def __init__(self, seed: int = 42) -> None:
        self.rng = random.Random(seed)
        aux = random.Random(seed + 1)  # fixes the rank order of the composed lists
        components = [f"{d} {k}" for d in DOMAINS for k in KINDS]
        aux.shuffle(components)
        funcs = [f"{v}_{n}" for v in VERBS for n in NOUNS]
        aux.shuffle(funcs)
        parts = KINDS + NOUNS
        classes = sorted(
            {
                _camel(aux.choice(DOMAINS), aux.choice(NOUNS), aux.choice(parts))
                for _ in range(60_000)
            }
        )
        aux.shuffle(classes)
        errors = [*BUILTIN_ERRORS, *(_camel(n, "error") for n in NOUNS)]
        aux.shuffle(errors)
        modules = [*NOUNS, *funcs[:300]]
        files = [f"{d}/{m}.{aux.choice(EXTS)}" for d in DIRS for m in aux.sample(modules, 150)]
        aux.shuffle(files)
        hosts = [f"{d}-{e}-{n:02d}" for d in DOMAINS for e in ENVS for n in range(1, 9)]
        aux.shuffle(hosts)
        words = [*NOUNS, *VERBS, *ADJECTIVES]
        aux.shuffle(words)

        lists: dict[str, Sequence[str]] = {
            "tool": TOOLS,
            "component": components,
            "bug": BUGS,
            "person": PEOPLE,
            "reason": REASONS,
            "task": TASKS,
            "cause": CAUSES,
            "fix": FIXES,
            "style": STYLES,
            "topic": TOPICS,
            "func": funcs,
            "class": classes,
            "error": errors,
            "file": files,
            "host": hosts,
            "period": PERIODS,
            "flag": FLAG_REASONS,
            "category": FACT_CATEGORIES,
            "noun": NOUNS,
            "verb": VERBS,
            "adj": ADJECTIVES,
            "adv": ADVERBS,
            "word": words,
        }
        self._items: dict[str, Sequence[str]] = {}
        self._prose: dict[str, list[str]] = {}
        self._cw: dict[str, list[float]] = {}
        for name, items in lists.items():
            s, q = SHAPES.get(name, DEFAULT_SHAPE)
            self._items[name] = items
            self._prose[name] = [_prose(x) for x in items]
            self._cw[name] = _cum_weights(len(items), s, q)
        self.topic: Topic | None = None

    # -- primitives ------------------------------------------------------------------------
    def _rank(self, slot: str) -> int:
        cw = self._cw[slot]
        return bisect.bisect_right(cw, self.rng.random() * cw[-1])

    def pick(self, slot: str) -> str:
        """A value of ``slot`` as stored (``auth-service``): from the topic, or Zipf-weighted."""
        if self.topic is not None and slot in self.topic and self.rng.random() < TOPIC_STICKINESS:
            return self.rng.choice(self.topic[slot])
        return self._items[slot][self._rank(slot)]

    def w(self, slot: str) -> str:
        """A value of ``slot`` as prose (``auth service``)."""
        return _prose(self.pick(slot))

    def two(self, slot: str) -> tuple[str, str]:
        """Two different values of ``slot``, as prose."""
        a = self.w(slot)
        b = self.w(slot)
        for _ in range(20):
            if b != a:
                break
            b = self.w(slot)
        return a, b

    def new_topic(self) -> Topic:
        """What one session is about: a few values per slot, drawn Zipf-weighted."""
        return {
            slot: [self._items[slot][self._rank(slot)] for _ in range(n)]
            for slot, n in TOPIC_SLOTS.items()
        }

    def ticket(self) -> str:
        return f"BM-{int(self.rng.paretovariate(0.5)) % 9000 + 100}"

    def version(self) -> str:
        return f"{self.rng.randint(0, 5)}.{self.rng.randint(0, 30)}.{self.rng.randint(0, 12)}"

    def ms(self) -> int:
        return self.rng.choice([5, 10, 20, 50, 80, 100, 150, 200, 250, 500, 800, 1000, 2000])

    def sha(self) -> str:
        """A short commit hash: unique, like real ones, so it adds to the index's long tail."""
        return f"{self.rng.getrandbits(28):07x}"

    def number(self) -> int:
        return int(self.rng.paretovariate(0.4)) % 100_000

    def filler(self) -> str:
        """A free-form sentence from the general vocabulary."""
        r = self.rng
        n1, n2, n3 = self.pick("noun"), self.pick("noun"), self.pick("noun")
        v = self.pick("verb")
        a = self.pick("adj")
        k = r.randrange(8)
        if k == 0:
            return f"The {a} {n1} {_third_person(v)} the {n2} before the {n3} is written."
        if k == 1:
            return f"We {_past(v)} the {n1} {_prose(self.pick('adv'))} and the {a} {n2} went away."
        if k == 2:
            return f"Maybe {v} the {n1} per {n2} instead, so the {n3} stays {a}."
        if k == 3:
            return f"{self.pick('class')} keeps a {a} {n1} of every {n2}; {self.pick('word')} and {self.pick('word')} depend on it."
        if k == 4:
            return f"Saw {self.pick('error')} from {self.pick('host')} when the {n1} {_third_person(v)} a {a} {n2}."
        if k == 5:
            return f"Line {self.number()} of {self.pick('file')} still {_third_person(v)} the {n1} {_prose(self.pick('adv'))}."
        if k == 6:
            return f"PR #{self.number()} ({self.sha()}) {_past(v)} the {n1} {n2} and added a {self.pick('word')} {n3} check."
        return f"It is a {a} {self.pick('word')} {n1}, not a {self.pick('word')} {n2}."

    def sentence(self) -> str:
        r = self.rng
        k = r.randrange(24)
        if k >= 16:
            return self.filler()
        t1, t2 = self.two("tool")
        comp = self.w("component")
        if k == 0:
            return f"We decided to use {t1} instead of {t2} for the {comp} because {self.pick('reason')}."
        if k == 1:
            return f"The {self.w('bug')} in the {comp} was caused by {self.pick('cause')}."
        if k == 2:
            return f"I fixed it by {self.pick('fix')} in {self.pick('file')} ({self.ticket()}, commit {self.sha()})."
        if k == 3:
            return f"{self.pick('person').title()} prefers {t1} over {t2} for {self.w('task')}."
        if k == 4:
            return f"`{self.pick('func')}()` in {self.pick('file')} now {_third_person(self.pick('verb'))} the {self.pick('noun')} for the {comp}."
        if k == 5:
            return f"The {comp} must stay under {self.ms()} ms at p95 after the {t1} upgrade to {self.version()}."
        if k == 6:
            return f"{self.pick('class')} raised {self.pick('error')} on {self.pick('host')} during the {self.pick('noun')} {self.pick('noun')}."
        if k == 7:
            return f"Running {t1} locally reproduced the {self.w('bug')} about one time in {r.randint(3, 50)}."
        if k == 8:
            return f"{self.pick('person').title()} reviewed the change to {self.pick('file')} and asked for {self.w('style')}."
        if k == 9:
            return f"The root cause was {self.pick('cause')}, not {t1} itself."
        if k == 10:
            after = self.ms()
            return f"After {self.pick('fix')}, the {comp} p95 dropped from {after * r.randint(2, 9)} ms to {after} ms."
        if k == 11:
            return f"Keep the {self.pick('noun')} logic inside {self.pick('class')}; the {comp} should not know about it."
        if k == 12:
            return f"Tests for `{self.pick('func')}` now use {t1} fixtures instead of hitting {t2}."
        if k == 13:
            return (
                f"The {t1} config lives in {self.pick('file')}; change it there, not in the {comp}."
            )
        if k == 14:
            return f"Rolled back {t1} {self.version()} because it broke {self.w('task')} on the {comp}."
        return f"Next step: {self.pick('verb')} the {self.pick('noun')} in the {comp} and add a regression test for the {self.w('bug')}."

    def paragraph(self, lo: int, hi: int) -> str:
        return " ".join(self.sentence() for _ in range(self.rng.randint(lo, hi)))

    # -- records ---------------------------------------------------------------------------
    def fact(self) -> tuple[str, str]:
        """(category, fact) — one atomic statement."""
        cat = self.pick("category")
        t1, t2 = self.two("tool")
        comp = self.w("component")
        make: dict[str, Callable[[], str]] = {
            "decision": lambda: (
                f"Use {t1} instead of {t2} for the {comp} because {self.pick('reason')}."
            ),
            "codebase": lambda: (
                f"{self.pick('class')} in {self.pick('file')} {_third_person(self.pick('verb'))} the {self.pick('noun')} for the {comp}."
            ),
            "bugfix": lambda: (
                f"The {self.w('bug')} in the {comp} came from {self.pick('cause')}; fixed by {self.pick('fix')} ({self.ticket()})."
            ),
            "preference": lambda: (
                f"{self.pick('person').title()} prefers {t1} over {t2} for {self.w('task')}."
            ),
            "constraint": lambda: (
                f"The {comp} must answer within {self.ms()} ms at p95 and run on {t1} {self.version()} or later."
            ),
            "convention": lambda: (
                f"In {self.pick('file')} we follow {self.w('style')} and keep {self.pick('noun')} handling in {self.pick('class')}."
            ),
            "workflow": lambda: (
                f"Before merging changes to the {comp}, run {t1} and {t2} and ask {self.pick('person').title()} for review."
            ),
            "identity": lambda: (
                f"{self.pick('person').title()} owns the {comp} and is the contact for {self.w('task')}."
            ),
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
        topics = sorted({self.pick("topic") for _ in range(self.rng.randint(1, 4))})
        return {
            "one_liner": f"{_past(self.pick('verb')).title()} the {comp} ({self.w('bug')}, {self.w('tool')})"[
                :200
            ],
            "topics": ",".join(topics),
            "outcome": self.sentence(),
            "summary": self.paragraph(4, 10),
            "key_facts": "\n".join(f"- {self.fact()[1]}" for _ in range(self.rng.randint(1, 4))),
            "code_refs": "\n".join(f"- {self.pick('file')}" for _ in range(self.rng.randint(1, 3))),
        }

    # -- queries ---------------------------------------------------------------------------
    def keyword_query(self) -> str:
        """1–3 keywords, as an agent types them."""
        slots = [
            "tool",
            "component",
            "bug",
            "func",
            "class",
            "error",
            "person",
            "noun",
            "file",
            "task",
        ]
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
                f"Who owns the {comp} and where is the {self.pick('noun')} handled?",
                f"Which test runner does {self.pick('person').title()} prefer for {self.w('task')}?",
                f"What was the root cause of the {bug} we saw with {t1}?",
                f"Where does `{self.pick('func')}` live and what calls it?",
                f"Have we already tried {self.pick('fix')} for the {bug}?",
                f"Why does {self.pick('class')} raise {self.pick('error')}?",
            ]
        )
        tails = [
            f" I think it was around the time we {_past(self.pick('verb'))} the {self.w('component')}.",
            f" It might have been in {self.pick('file')} or somewhere near the {self.w('component')}.",
            f" {self.pick('person').title()} mentioned something about {self.pick('cause')}.",
            f" We were seeing p95 above {self.ms()} ms and the {self.w('bug')} kept coming back.",
        ]
        extra = self.rng.choice([0, 0, 1, 2])
        text = head + "".join(self.rng.choice(tails) for _ in range(extra))
        return " ".join(text.split()[:40])

    def queries(self, n: int) -> list[str]:
        """``n`` varied queries, alternating keywords and natural-language questions."""
        return [self.keyword_query() if i % 2 == 0 else self.question() for i in range(n)]
