"""Concurrent load: N client processes, each a distinct user, through the real MCP tools.

    python bench/load.py                                   # 20 processes × 60 s, SQLite then PostgreSQL
    python bench/load.py --backend sqlite --seconds 5 --processes 4     # smoke run
    python bench/load.py --backend postgresql --json /tmp/load.json

Each client process builds the server exactly as ``bigmind serve`` does
(``bigmind.mcp.server.build_server`` with a ``Runtime(background=True)``) and talks to it through an
in-memory ``fastmcp.Client``, then loops over "conversations" for ``--seconds``:
``memory_start_session``, three turns of ``memory_search_facts`` + ``memory_search_chunks`` +
``memory_append_chunk``, two ``memory_store_fact``, one more ``memory_append_chunk``, and
``memory_end_session`` with a summary (14 tool calls, 8 of them writes). By default there is
no think time: every client calls as fast as the server answers, so this is a stress test (on a
small machine the latencies are mostly waiting for a CPU); ``--think-ms`` adds an exponential
pause after each call, as an agent thinking between tool calls. Team mode on one shared SQLite file; enterprise mode on PostgreSQL (a ``pgserver``
started here, or ``BIGMIND_BENCH_PG_URL``; a fresh database per run).

Every write carries a unique marker, and each client keeps the ids the server acknowledged. When
all clients have exited, the parent reads the database and checks that every acknowledged write
is there with its marker (zero lost writes), and counts rows written but never acknowledged.
Any exception from a tool call (a ``ToolError`` included) counts as an error; the first few
messages are kept. ``BIGMIND_EMBED_MODEL=off`` in the clients (keyword search only) unless
``--with-model``. See bench/README.md, "Concurrent load".
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing as mp
import os
import shutil
import sys
import tempfile
import time
import traceback
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

BENCH_DIR = Path(__file__).resolve().parent
OPS = (
    "memory_start_session",
    "memory_search_facts",
    "memory_search_chunks",
    "memory_append_chunk",
    "memory_store_fact",
    "memory_end_session",
)
WRITES = {"memory_start_session", "memory_append_chunk", "memory_store_fact", "memory_end_session"}
TURNS = 3
KEEP_MESSAGES = 5


# -- the client process -----------------------------------------------------------------------
def worker(cfg: dict[str, Any], barrier: Any, out: Any) -> None:
    """One client process: its own server, its own user; results go to ``out``."""
    for key in list(os.environ):
        if key.startswith(("BIGMIND_", "FASTMCP_")):
            del os.environ[key]
    os.environ["BIGMIND_EMBED_MODEL"] = cfg["embed_model"]
    os.environ["BIGMIND_LOG_LEVEL"] = "ERROR"
    try:
        res = asyncio.run(_client(cfg, barrier))
    except BaseException as exc:  # report, never hang the parent  # noqa: BLE001
        with contextlib.suppress(Exception):
            barrier.abort()
        res = {"user": cfg["user"], "fatal": f"{type(exc).__name__}: {exc}",
               "trace": traceback.format_exc()[-2000:]}  # fmt: skip
    out.put(res)


async def _client(cfg: dict[str, Any], barrier: Any) -> dict[str, Any]:
    import gc
    import random

    from fastmcp import Client
    from textgen import TextGen

    from bigmind.config import Settings
    from bigmind.mcp.server import build_server
    from bigmind.runtime import Runtime

    t0 = time.perf_counter()
    user = cfg["user"]
    settings = Settings(
        db_path=cfg["db_path"],
        db_url=cfg["db_url"],
        mode=cfg["mode"],
        user=user,
        embed_model=cfg["embed_model"],
        pool_size=cfg["pool_size"],
    )
    rt = Runtime(settings, background=True)  # as `bigmind serve` builds it
    gen = TextGen(seed=cfg["seed"])
    rng = random.Random(cfg["seed"])
    lat: dict[str, list[float]] = {op: [] for op in OPS}
    errors: dict[str, int] = {op: 0 for op in OPS}
    messages: list[str] = []
    acked: dict[str, list[Any]] = {"chunks": [], "facts": [], "started": [], "ended": []}
    n = 0  # write counter: markers are unique per (run, user, n)
    tag = cfg["tag"]
    think = cfg["think_ms"] / 1000

    def marker() -> str:
        nonlocal n
        n += 1
        return f"lw{tag}x{user}x{n}"

    async with Client(build_server(settings, rt)) as client:

        async def call(op: str, args: dict[str, Any]) -> dict[str, Any] | None:
            t = time.perf_counter()
            try:
                r = await client.call_tool(op, args)
            except Exception as exc:  # ToolError, transport, anything  # noqa: BLE001
                lat[op].append(time.perf_counter() - t)
                errors[op] += 1
                if len(messages) < KEEP_MESSAGES:
                    messages.append(
                        f"{op}: {type(exc).__name__}: {' '.join(str(exc).split())}"[:300]
                    )
                return None
            lat[op].append(time.perf_counter() - t)
            if think:  # an agent's pause between tool calls (exponential, mean --think-ms)
                await asyncio.sleep(rng.expovariate(1.0 / think))
            return r.structured_content or {}

        # Open the database and warm the server before the clock starts.
        await client.call_tool("memory_list_sessions", {"limit": 1})
        ready_s = time.perf_counter() - t0
        queries = gen.queries(400)
        barrier.wait(timeout=900)
        gc.collect()
        start = time.perf_counter()
        deadline = start + cfg["seconds"]
        conversations = 0
        while time.perf_counter() < deadline:
            gen.topic = gen.new_topic()
            data = await call("memory_start_session", {"ide_hint": "load-bench"})
            if data is None or not data.get("session_id"):
                await asyncio.sleep(0.05)
                continue
            sid = data["session_id"]
            acked["started"].append(sid)
            for turn in range(TURNS + 1):
                if turn < TURNS:
                    await call("memory_search_facts", {"query": rng.choice(queries), "limit": 10})
                    await call("memory_search_chunks", {"query": rng.choice(queries), "limit": 10})
                role, content, flag = gen.chunk()
                m = marker()
                data = await call(
                    "memory_append_chunk",
                    {"content": f"{content} [{m}]", "session_id": sid, "role": role,
                     "flag_reason": flag},
                )  # fmt: skip
                if data is not None:
                    acked["chunks"].append((int(data["chunk_id"]), m))
                if turn in (0, 2):
                    cat, fact = gen.fact()
                    m = marker()
                    data = await call(
                        "memory_store_fact",
                        {"category": cat, "fact": f"{fact} [{m}]", "session_id": sid,
                         "importance": rng.randint(3, 8)},
                    )  # fmt: skip
                    if data is not None:
                        acked["facts"].append((int(data["fact_id"]), m, bool(data.get("created"))))
            s = gen.session_summary()
            m = marker()
            data = await call(
                "memory_end_session",
                {"session_id": sid, "one_liner": s["one_liner"], "topics": s["topics"],
                 "outcome": s["outcome"], "summary": f"{s['summary']} [{m}]",
                 "key_facts": s["key_facts"], "importance": rng.randint(3, 8)},
            )  # fmt: skip
            if data is not None:
                acked["ended"].append((sid, m))
            conversations += 1
        elapsed = time.perf_counter() - start
    rt.close()
    rss = 0
    try:
        with open("/proc/self/status") as fh:
            rss = next(int(ln.split()[1]) for ln in fh if ln.startswith("VmHWM")) // 1024
    except (OSError, StopIteration):
        pass
    return {
        "user": user,
        "ready_s": round(ready_s, 2),
        "elapsed_s": round(elapsed, 3),
        "conversations": conversations,
        "lat": lat,
        "errors": errors,
        "messages": messages,
        "acked": acked,
        "peak_rss_mb": rss,
    }


# -- the database -------------------------------------------------------------------------------
class PgServer:
    """A PostgreSQL server for the run: ``BIGMIND_BENCH_PG_URL``, or a pgserver in a temp dir."""

    def __init__(self) -> None:
        self.url = os.environ.get("BIGMIND_BENCH_PG_URL") or ""
        self._srv: Any = None
        self._dir: str | None = None
        if not self.url:
            import warnings

            warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
            from pgserver.postgres_server import get_server

            self._dir = tempfile.mkdtemp(prefix="bigmind-bench-pg-")
            self._srv = get_server(self._dir, cleanup_mode="delete")
            self.url = self._srv.get_uri()

    @property
    def external(self) -> bool:
        return self._srv is None

    def create_database(self, prefix: str) -> str:
        import psycopg

        name = f"{prefix}_{os.getpid()}_{uuid.uuid4().hex[:6]}"
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return with_database(self.url, name)

    def drop_database(self, url: str) -> None:
        import psycopg

        name = database_of(url)
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def settings(self) -> dict[str, str]:
        import psycopg

        keys = ("server_version", "shared_buffers", "work_mem", "max_connections",
                "effective_cache_size", "synchronous_commit", "max_wal_size")  # fmt: skip
        with psycopg.connect(self.url, autocommit=True) as conn:
            return {k: str(scalar(conn, f"SHOW {k}")) for k in keys}

    def configure(self, **params: str) -> bool:
        """ALTER SYSTEM SET each parameter and restart (only a server started here); True if
        done. Restarts keep the socket options pg_ctl recorded at the first start."""
        if self._srv is None or not params:
            return False
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            for k, v in params.items():
                conn.execute(f"ALTER SYSTEM SET {k} = '{v}'")
        _pg_ctl()(["-w", "-m", "fast", "restart"], pgdata=self._srv.pgdata,
               user=self._srv.system_user, timeout=60)  # fmt: skip
        self._restarted = True
        return True

    def close(self) -> None:
        if self._srv is not None:
            if getattr(self, "_restarted", False):  # pgserver tracks the first postmaster only
                try:
                    _pg_ctl()(["-w", "-m", "fast", "stop"], pgdata=self._srv.pgdata,
                           user=self._srv.system_user, timeout=60)  # fmt: skip
                except Exception as exc:  # noqa: BLE001
                    progress(f"could not stop the PostgreSQL server: {exc}")
            self._srv.cleanup()
            self._srv = None


def scalar(conn: Any, sql: str, params: Sequence[Any] = ()) -> Any:
    """The first column of the one row ``sql`` returns (psycopg)."""
    row = conn.execute(sql, params).fetchone()
    assert row is not None, sql
    return row[0]


def _pg_ctl() -> Callable[..., str]:
    """pgserver's ``pg_ctl`` wrapper (made at import time, one per binary: mypy cannot see it)."""
    import pgserver

    pg_ctl: Callable[..., str] = pgserver.pg_ctl  # type: ignore[attr-defined]
    return pg_ctl


def database_of(url: str) -> str:
    from urllib.parse import urlsplit

    return urlsplit(url).path.lstrip("/")


def with_database(url: str, name: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


def preseed(backend: Any, users: Sequence[str], mode: str, chunks: int, seed: int) -> int:
    """Give each user a small past memory (closed sessions, chunks, facts) so searches find
    something from the first second; returns the rows written. Not counted as load."""
    import random

    from seed import _insert, _ts
    from textgen import TextGen

    from bigmind.models import content_hash
    from bigmind.storage.store import Store

    if chunks <= 0:
        for u in users:
            Store(backend, u, mode=mode)
        return 0
    total = 0
    now = time.time()
    for i, u in enumerate(users):
        store = Store(backend, u, mode=mode)
        gen = TextGen(seed + 1000 + i)
        rng = random.Random(seed + i)
        n_sess = max(1, chunks // 10)
        sess, topics, srows = [], [], []
        for _ in range(n_sess):
            start = now - rng.uniform(3 * 3600, 90 * 86_400)
            end = start + rng.uniform(600, 3 * 3600)
            sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            gen.topic = gen.new_topic()
            topics.append(gen.topic)
            s = gen.session_summary()
            sess.append((sid, start, end))
            srows.append((sid, store.uid, _ts(start), _ts(end), s["one_liner"], s["topics"],
                          s["outcome"], rng.randint(2, 9), 0, "cursor", _ts(end), 0))  # fmt: skip
        crows, frows, seen = [], [], set()
        seq = [0] * n_sess
        for _ in range(chunks):
            k = rng.randrange(n_sess)
            seq[k] += 1
            gen.topic = topics[k]
            role, content, flag = gen.chunk()
            crows.append((sess[k][0], store.uid, role, content, flag, seq[k],
                          _ts(rng.uniform(sess[k][1], sess[k][2]))))  # fmt: skip
        for _ in range(chunks // 2):
            k = rng.randrange(n_sess)
            gen.topic = topics[k]
            cat, text = gen.fact()
            if content_hash(text) in seen:
                continue
            seen.add(content_hash(text))
            ts = _ts(rng.uniform(sess[k][1], sess[k][2]))
            frows.append((store.uid, cat, text, sess[k][0], 1.0, rng.randint(1, 10),
                          content_hash(text), ts, ts, 0, 0))  # fmt: skip
        with backend.transaction() as tx:
            total += _insert(tx, "sessions",
                             ("id", "user_id", "started_at", "ended_at", "one_liner", "topics",
                              "outcome", "importance", "has_tier2", "ide_hint",
                              "last_activity_at", "auto_closed"), srows)  # fmt: skip
            total += _insert(tx, "conversation_chunks",
                             ("session_id", "user_id", "role", "content", "flag_reason", "seq",
                              "created_at"), crows)  # fmt: skip
            total += _insert(tx, "facts",
                             ("user_id", "category", "fact", "source_session", "confidence",
                              "importance", "content_hash", "created_at", "updated_at",
                              "deprecated", "access_count"), frows)  # fmt: skip
    return total


def verify(backend: Any, results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Every acknowledged write is in the database with its marker; count unacknowledged rows."""
    out: dict[str, Any] = {"acked": {"chunks": 0, "facts": 0, "sessions_started": 0, "sessions_ended": 0},
           "lost": {"chunks": 0, "facts": 0, "sessions_started": 0, "sessions_ended": 0},
           "unacked_rows": {"chunks": 0, "facts": 0}, "lost_examples": []}  # fmt: skip
    q = backend.query

    def lose(kind: str, what: str) -> None:
        out["lost"][kind] += 1
        if len(out["lost_examples"]) < 10:
            out["lost_examples"].append(f"{kind}: {what}")

    for r in results:
        if "acked" not in r:
            continue
        a = r["acked"]
        uid = q("SELECT id FROM users WHERE username = ?", (r["user"],))[0]["id"]
        tagged = "%[lw%"
        chunks = {int(x["id"]): x["content"] for x in q(
            "SELECT id, content FROM conversation_chunks WHERE user_id = ? AND content LIKE ?",
            (uid, tagged))}  # fmt: skip
        for cid, m in a["chunks"]:
            out["acked"]["chunks"] += 1
            if f"[{m}]" not in chunks.get(cid, ""):
                lose("chunks", f"#{cid} {m}")
        facts = {int(x["id"]): x["fact"] for x in q(
            "SELECT id, fact FROM facts WHERE user_id = ? AND fact LIKE ?", (uid, tagged))}  # fmt: skip
        for fid, m, _created in a["facts"]:
            out["acked"]["facts"] += 1
            if f"[{m}]" not in facts.get(fid, ""):
                lose("facts", f"#{fid} {m}")
        sessions = {x["id"]: x for x in q(
            "SELECT s.id, s.ended_at, coalesce(m.summary, '') AS summary FROM sessions s"
            " LEFT JOIN session_summaries m ON m.id = s.id"
            " WHERE s.user_id = ? AND s.ide_hint = 'load-bench'", (uid,))}  # fmt: skip
        for sid in a["started"]:
            out["acked"]["sessions_started"] += 1
            if sid not in sessions:
                lose("sessions_started", sid)
        for sid, m in a["ended"]:
            out["acked"]["sessions_ended"] += 1
            row = sessions.get(sid)
            if row is None or not row["ended_at"] or f"[{m}]" not in row["summary"]:
                lose("sessions_ended", f"{sid} {m}")
        acked_c = {cid for cid, _ in a["chunks"]}
        acked_f = {fid for fid, _m, _c in a["facts"]}
        out["unacked_rows"]["chunks"] += len(set(chunks) - acked_c)
        out["unacked_rows"]["facts"] += len(set(facts) - acked_f)
    out["lost_total"] = sum(out["lost"].values())
    return out


# -- one backend ------------------------------------------------------------------------------
def run_backend(kind: str, a: argparse.Namespace, pg: PgServer | None) -> dict[str, Any]:
    from run import CpuMeter

    from bigmind.config import Settings
    from bigmind.storage.connect import open_database

    workdir = Path(tempfile.mkdtemp(prefix=f"bigmind-load-{kind}-"))
    db_path = workdir / "team.db"
    db_url = pg.create_database("bigmind_load") if (kind == "postgresql" and pg) else None
    mode: Literal["team", "enterprise"] = "enterprise" if db_url else "team"
    users = [f"user{i:02d}" for i in range(a.processes)]
    tag = uuid.uuid4().hex[:6]
    info: dict[str, Any] = {"backend": kind, "mode": mode, "processes": a.processes,
                            "seconds": a.seconds, "embed_model": a.embed_model,
                            "pool_size": a.pool_size, "preseed_chunks_per_user": a.preseed, "think_ms": a.think_ms}  # fmt: skip
    try:
        t = time.perf_counter()
        admin = open_database(Settings(db_path=db_path, db_url=db_url, mode=mode, user="admin",
                                       embed_model="off"))  # fmt: skip
        try:
            info["preseed_rows"] = preseed(admin, users, mode, a.preseed, a.seed)
        finally:
            admin.close()
        info["preseed_s"] = round(time.perf_counter() - t, 2)
        progress(f"{kind}: schema + preseed {info['preseed_rows']:,} rows in {info['preseed_s']} s;"
                 f" starting {a.processes} client processes")  # fmt: skip

        ctx = mp.get_context("spawn")
        barrier = ctx.Barrier(a.processes + 1)
        queue = ctx.Queue()
        procs = []
        for i, u in enumerate(users):
            cfg = {"user": u, "db_path": str(db_path), "db_url": db_url, "mode": mode,
                   "embed_model": a.embed_model, "pool_size": a.pool_size, "seconds": a.seconds,
                   "seed": a.seed * 100 + i, "tag": tag, "think_ms": a.think_ms}  # fmt: skip
            p = ctx.Process(target=worker, args=(cfg, barrier, queue), name=f"load-{u}")
            p.start()
            procs.append(p)
        t_spawn = time.perf_counter()
        try:
            barrier.wait(timeout=900)
        except Exception:  # noqa: BLE001
            progress(f"{kind}: a client failed to start")
        info["startup_s"] = round(time.perf_counter() - t_spawn, 2)
        progress(f"{kind}: all clients ready after {info['startup_s']} s; running {a.seconds} s")
        cpu = CpuMeter()
        results: list[dict[str, Any]] = []

        def collect() -> None:
            deadline = time.monotonic() + a.seconds + 600
            while len(results) < len(procs) and time.monotonic() < deadline:
                try:
                    results.append(queue.get(timeout=5))
                except Exception:  # noqa: BLE001
                    if not any(p.is_alive() for p in procs) and queue.empty():
                        break

        info["load_before"] = os.getloadavg()
        cpu.measure("run", collect)
        info["load_after"] = os.getloadavg()
        info["cpu"] = cpu.sections.get("run")
        for p in procs:
            p.join(timeout=30)
            if p.is_alive():
                p.terminate()
        fatal = [r for r in results if "fatal" in r]
        info["fatal"] = [
            {"user": r["user"], "error": r["fatal"], "trace": r["trace"]} for r in fatal
        ]
        info["missing_clients"] = a.processes - len(results)
        ok = [r for r in results if "fatal" not in r]
        check = open_database(Settings(db_path=db_path, db_url=db_url, mode=mode, user="admin",
                                       embed_model="off"))  # fmt: skip
        try:
            info["verify"] = verify(check, ok)
            info["db_bytes"] = check.file_size()
        finally:
            check.close()
        info.update(aggregate(ok))
        if pg and kind == "postgresql":
            info["pg_settings"] = pg.settings()
    finally:
        if db_url and pg and not a.keep:
            try:
                pg.drop_database(db_url)
            except Exception as exc:  # the figures matter more than the cleanup  # noqa: BLE001
                progress(f"could not drop {db_url}: {exc}")
        if not a.keep:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            info["kept"] = str(db_path) if kind == "sqlite" else db_url
    return info


def aggregate(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    from run import summary_ms

    ops: dict[str, Any] = {}
    all_times: list[float] = []
    errors_total = 0
    for op in OPS:
        times = [t for r in results for t in r["lat"][op]]
        errs = sum(r["errors"][op] for r in results)
        errors_total += errs
        all_times += times
        ops[op] = {**(summary_ms(times) if times else {"n": 0}), "errors": errs}
    elapsed = max((r["elapsed_s"] for r in results), default=0.0) or 1.0
    writes = sum(ops[op]["n"] for op in WRITES)
    return {
        "ops": ops,
        "all": {**(summary_ms(all_times) if all_times else {"n": 0}), "errors": errors_total},
        "calls_per_s": round(len(all_times) / elapsed, 1),
        "writes_per_s": round(writes / elapsed, 1),
        "conversations": sum(r["conversations"] for r in results),
        "messages": [m for r in results for m in r["messages"]][: KEEP_MESSAGES * 2],
        "client_ready_s_max": max((r["ready_s"] for r in results), default=None),
        "client_peak_rss_mb_max": max((r["peak_rss_mb"] for r in results), default=None),
        "per_client_calls": sorted(sum(len(v) for v in r["lat"].values()) for r in results),
    }


# -- report -----------------------------------------------------------------------------------
def render(runs: Sequence[dict[str, Any]], env: dict[str, Any]) -> str:
    lines = [
        f"BigMind concurrent load — {env['when']}, {env['cpu']} × {env['cpus']}, "
        f"Python {env['python']}, SQLite {env['sqlite']}, FastMCP {env['fastmcp']}, "
        f"bigmind at {env['git_commit']}{' + uncommitted changes' if env['bigmind_tree_dirty'] else ''}",
        "",
    ]
    for r in runs:
        if "ops" not in r:
            lines += [f"{r['backend']}: no results ({r.get('fatal') or r.get('error')})", ""]
            continue
        v = r["verify"]
        pgv = r.get("pg_settings", {}).get("server_version")
        head = (f"**{r['backend']}** ({r['mode']} mode{', PostgreSQL ' + pgv if pgv else ''}): "
                f"{r['processes']} client processes × {r['seconds']} s, "
                f"{'think time ' + format(r['think_ms'], 'g') + ' ms, ' if r.get('think_ms') else 'no think time, '}"
                f"embeddings "
                f"{'off' if r['embed_model'] == 'off' else r['embed_model']}, "
                f"{r['conversations']:,} conversations, {r['calls_per_s']:,} calls/s "
                f"({r['writes_per_s']:,} writes/s)")  # fmt: skip
        lines += [head, "",
                  "| operation | calls | p50 ms | p95 ms | p99 ms | max ms | errors |",
                  "|---|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
        for op, s in [*r["ops"].items(), ("**all calls**", r["all"])]:
            if not s.get("n"):
                lines.append(f"| {op} | 0 | | | | | {s['errors']} |")
                continue
            lines.append(f"| {op} | {s['n']:,} | {s['p50_ms']:.1f} | {s['p95_ms']:.1f} | "
                         f"{s['p99_ms']:.1f} | {s['max_ms']:.1f} | {s['errors']} |")  # fmt: skip
        ack = v["acked"]
        lines += [
            "",
            f"Acknowledged writes: {ack['chunks']:,} chunks, {ack['facts']:,} facts, "
            f"{ack['sessions_started']:,} sessions opened, {ack['sessions_ended']:,} closed with a "
            f"summary; **lost: {v['lost_total']}**"
            + (f" ({v['lost']}; e.g. {v['lost_examples'][:3]})" if v["lost_total"] else "")
            + f"; rows present but never acknowledged: {v['unacked_rows']['chunks']} chunks, "
            f"{v['unacked_rows']['facts']} facts.",
            f"Machine CPU busy during the run: {r['cpu']['busy_pct']:.0f} % (steal "
            f"{r['cpu']['steal_pct']:.0f} %); load average {r['load_before'][0]:.2f} before, "
            f"{r['load_after'][0]:.2f} after; clients ready {r['startup_s']} s after spawn; "
            f"client peak RSS ≤ {r['client_peak_rss_mb_max']} MB; calls per client "
            f"{r['per_client_calls'][0]:,}–{r['per_client_calls'][-1]:,}."
            if r.get("cpu")
            else "",
        ]
        if r["fatal"] or r["missing_clients"]:
            lines.append(f"Clients that failed: {len(r['fatal'])}, missing: {r['missing_clients']}: "
                         + "; ".join(f['error'] for f in r['fatal'][:3]))  # fmt: skip
        if r["messages"]:
            lines.append("First errors: " + " | ".join(r["messages"][:KEEP_MESSAGES]))
        lines.append("")
    return "\n".join(lines)


def progress(msg: str) -> None:
    print(f"  … {msg}", file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backend", choices=("sqlite", "postgresql", "both"), default="both")
    p.add_argument("--processes", type=int, default=20, help="client processes (one user each)")
    p.add_argument("--seconds", type=float, default=60.0, help="how long every client runs")
    p.add_argument("--preseed", type=int, default=500,
                   help="past chunks per user written before the run (half as many facts)")  # fmt: skip
    p.add_argument("--think-ms", type=float, default=0.0,
                   help="mean pause after each tool call (default 0: calls back to back)")  # fmt: skip
    p.add_argument("--pool-size", type=int, default=4, help="BIGMIND_POOL_SIZE (PostgreSQL)")
    p.add_argument("--with-model", action="store_true",
                   help="keep the default embedding model (default: BIGMIND_EMBED_MODEL=off)")  # fmt: skip
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--json", type=Path, help="also write every figure to this JSON file")
    p.add_argument("--keep", action="store_true", help="keep the databases afterwards")
    a = p.parse_args(argv)
    a.embed_model = "all-MiniLM-L6-v2" if a.with_model else "off"

    from run import environment, source_fingerprint

    env = environment()
    env["source_before"] = source_fingerprint()
    kinds = ["sqlite", "postgresql"] if a.backend == "both" else [a.backend]
    runs = []
    pg = PgServer() if "postgresql" in kinds else None
    try:
        for kind in kinds:
            try:
                runs.append(run_backend(kind, a, pg))
            except Exception as exc:  # noqa: BLE001
                traceback.print_exc()
                runs.append({"backend": kind, "error": f"{type(exc).__name__}: {exc}"})
    finally:
        if pg is not None:
            pg.close()
    env["source_after"] = source_fingerprint()
    text = render(runs, env)
    if env["source_before"] != env["source_after"]:
        text += "\nWARNING: bigmind/ changed during this run; the figures mix code versions.\n"
    print(text)
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps({"env": env, "runs": runs}, indent=2, default=str) + "\n")
        print(f"JSON written to {a.json}")
    return 0  # a benchmark reports; lost writes show in the table and the JSON


if __name__ == "__main__":
    sys.path.insert(0, str(BENCH_DIR))
    sys.exit(main())
