"""The HTTP gateway under load: N MCP clients over streamable HTTP, each its own user and token.

    python bench/gateway_load.py                          # 100 clients × 60 s on PostgreSQL
    python bench/gateway_load.py --clients 10 --seconds 5 --backend sqlite     # smoke run
    python bench/gateway_load.py --json /tmp/gateway.json

The gateway is the real command (``bigmind serve --http`` on 127.0.0.1, a subprocess); the clients
are the mcp SDK's streamable HTTP client in ``--processes`` processes, each session with its own
bearer token (one user per client). Each client loops over conversations for ``--seconds``:
``memory_start_session``, ``memory_recall``, ``memory_store_fact`` ×2, ``memory_search_facts``,
``memory_append_chunk``, ``memory_end_session`` — 7 calls, 5 of them writes, every write with a
unique marker — as fast as the gateway answers (a stress test). Meanwhile a separate writer
process is killed with SIGKILL ``--kills`` times in the middle of its calls (restarted each
time): it writes down each fact the gateway acknowledged before making the next call.

At the end every acknowledged fact (the clients' and the killed writer's) is looked up in the
database as its user and must hold its marker: lost writes must be 0. Any tool error or
transport failure counts as an error. Bounded: the clients stop at the deadline, the gateway is
stopped (SIGTERM, then SIGKILL after 15 s), and the run as a whole aborts after
``--seconds`` + 300 s. See bench/README.md, "The gateway under load".
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

if TYPE_CHECKING:
    from load import PgServer

BENCH_DIR = Path(__file__).resolve().parent
BIGMIND = Path(sys.executable).parent / "bigmind"
OPS = (
    "memory_start_session",
    "memory_recall",
    "memory_store_fact",
    "memory_search_facts",
    "memory_append_chunk",
    "memory_end_session",
)
KEEP_MESSAGES = 5
CALL_TIMEOUT_S = 60


def progress(msg: str) -> None:
    print(f"[gateway-load] {msg}", file=sys.stderr, flush=True)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


# -- clients ------------------------------------------------------------------------------------
async def _session(url: str, token: str) -> Any:
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=CALL_TIMEOUT_S)
    transport = streamable_http_client(f"{url}/mcp", http_client=http)
    read, write = await transport.__aenter__()
    session = ClientSession(read, write)
    await session.__aenter__()
    await session.initialize()
    return http, transport, session


async def _one_client(url: str, user: str, token: str, until: float, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    lat: dict[str, list[float]] = {op: [] for op in OPS}
    errors = 0
    messages: list[str] = []
    acked: list[tuple[int, str]] = []
    n = 0
    try:
        http, transport, session = await _session(url, token)
    except Exception as exc:  # noqa: BLE001 - counted, never hangs the run
        return {"user": user, "lat": lat, "errors": 1, "messages": [f"connect: {exc}"],
                "acked": acked, "calls": 0}  # fmt: skip

    async def call(op: str, args: dict[str, Any]) -> dict[str, Any] | None:
        nonlocal errors
        t = time.perf_counter()
        try:
            r = await asyncio.wait_for(session.call_tool(op, args), CALL_TIMEOUT_S)
        except Exception as exc:  # noqa: BLE001 - transport or timeout: an error
            errors += 1
            if len(messages) < KEEP_MESSAGES:
                messages.append(f"{op}: {type(exc).__name__}: {exc}"[:300])
            return None
        lat[op].append(time.perf_counter() - t)
        if r.is_error:
            errors += 1
            if len(messages) < KEEP_MESSAGES:
                messages.append(f"{op}: {r.content[0].text if r.content else '?'}"[:300])
            return None
        return dict(r.structured_content or {})

    try:
        while time.monotonic() < until:
            data = await call("memory_start_session", {"ide_hint": "gateway-load"})
            if data is None:
                await asyncio.sleep(0.05)
                continue
            sid = data["session_id"]
            await call("memory_recall", {"query": rng.choice(QUERIES), "limit": 5})
            for _ in range(2):
                n += 1
                marker = f"gl{user}x{n}"
                fact = f"{rng.choice(FACTS)} [{marker}]"
                stored = await call(
                    "memory_store_fact", {"category": "codebase", "fact": fact, "session_id": sid}
                )
                if stored is not None:
                    acked.append((int(stored["fact_id"]), marker))
            await call("memory_search_facts", {"query": rng.choice(QUERIES), "limit": 5})
            await call("memory_append_chunk", {"content": f"turn {n} of {user}", "session_id": sid})
            await call(
                "memory_end_session",
                {"session_id": sid, "one_liner": f"load turn {n}", "topics": "load,gateway"},
            )
    finally:
        await session.__aexit__(None, None, None)
        await transport.__aexit__(None, None, None)
        await http.aclose()
    return {"user": user, "lat": lat, "errors": errors, "messages": messages, "acked": acked,
            "calls": sum(len(v) for v in lat.values())}  # fmt: skip


async def _clients(url: str, users: list[tuple[str, str]], until: float) -> list[dict[str, Any]]:
    tasks = [_one_client(url, u, t, until, i) for i, (u, t) in enumerate(users)]
    return list(await asyncio.gather(*tasks))


OWNER_ROLE, RUNTIME_ROLE, ROLE_PASSWORD = "gwload_owner", "gwload_runtime", "gwload"


def two_roles(pg: PgServer) -> tuple[str, str]:
    """A database on ``pg`` set up as docs/privacy-postgres.md says: a plain owner role
    (migrations, maintenance, tokens) and a runtime role for requests, granted by
    ``pgroles.grant_runtime`` once the tables exist. Returns (runtime URL, owner URL)."""
    import psycopg
    from load import database_of

    url = pg.create_database("gwload")
    name = database_of(url)
    with psycopg.connect(pg.url, autocommit=True) as conn:
        for role in (OWNER_ROLE, RUNTIME_ROLE):
            if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone():
                continue
            conn.execute(
                f"CREATE ROLE {role} LOGIN NOSUPERUSER NOBYPASSRLS PASSWORD '{ROLE_PASSWORD}'"
            )
        conn.execute(f'ALTER DATABASE "{name}" OWNER TO {OWNER_ROLE}')
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")  # a superuser's to create
        conn.execute(f"ALTER SCHEMA public OWNER TO {OWNER_ROLE}")
    return as_role(url, RUNTIME_ROLE), as_role(url, OWNER_ROLE)


def as_role(url: str, role: str) -> str:
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{role}:{ROLE_PASSWORD}@{host}"))


def client_process(url: str, users: list[tuple[str, str]], until: float, out: Any) -> None:
    out.put(asyncio.run(_clients(url, users, until)))


def killed_writer(url: str, user: str, token: str, log: str) -> None:
    """Stores facts as fast as it can; after each acknowledgement, one line in ``log``."""

    async def run() -> None:
        _, _, session = await _session(url, token)
        n = 0
        with open(log, "a", encoding="utf-8") as fh:
            while True:
                n += 1
                marker = f"kw{os.getpid()}x{n}"
                r = await session.call_tool(
                    "memory_store_fact",
                    {"category": "codebase", "fact": f"killed writer [{marker}]"},
                )
                if not r.is_error:
                    fact_id = int((r.structured_content or {})["fact_id"])
                    fh.write(json.dumps([fact_id, marker]) + "\n")
                    fh.flush()
                    os.fsync(fh.fileno())

    asyncio.run(run())


QUERIES = (
    "which message broker do payments use",
    "how do we deploy the api",
    "what port does the server listen on",
    "database migrations policy",
    "retry policy for webhooks",
)
FACTS = (
    "The payments service publishes to RabbitMQ",
    "Deploys go through the staging cluster first",
    "The API listens on port 8080 behind nginx",
    "Migrations are reviewed by the data team",
    "Webhooks retry five times with backoff",
)


# -- the run -----------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--clients", type=int, default=100)
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--processes", type=int, default=4, help="client processes")
    p.add_argument("--kills", type=int, default=3, help="SIGKILLs of the writer mid-call")
    p.add_argument("--backend", choices=("postgresql", "sqlite"), default="postgresql")
    p.add_argument("--json", help="write the results here")
    args = p.parse_args(argv)
    sys.path.insert(0, str(BENCH_DIR))
    from load import PgServer

    from bigmind.config import Settings
    from bigmind.memory import api_tokens
    from bigmind.storage.connect import open_database
    from bigmind.storage.store import Store

    work = Path(tempfile.mkdtemp(prefix="bigmind-gwload-"))
    pg = PgServer() if args.backend == "postgresql" else None
    db_url, owner_url = two_roles(pg) if pg else (None, None)
    env = {k: v for k, v in os.environ.items() if not k.startswith("BIGMIND_")}
    env.update(
        BIGMIND_DB_PATH=str(work / "memory.db"),
        BIGMIND_MODE="enterprise" if db_url else "team",
        BIGMIND_USER="gateway",
        BIGMIND_EMBED_MODEL="off",
        BIGMIND_RATE_LIMIT="0",
        BIGMIND_CONNECTIONS_PER_ADDRESS="0",  # every client connects from 127.0.0.1
        BIGMIND_LOG_LEVEL="WARNING",
        BIGMIND_POOL_SIZE="8",
    )
    if db_url and owner_url:
        env["BIGMIND_DB_URL"] = db_url
        env["BIGMIND_DB_OWNER_URL"] = owner_url
    settings = Settings(
        db_path=work / "memory.db",
        db_url=owner_url,  # tokens are made, and the writes checked, as the owner
        mode="enterprise" if db_url else "team",
        user="gateway",
    )
    backend = open_database(settings)
    if db_url:
        from bigmind.storage import pgroles

        with backend.transaction() as tx:
            pgroles.grant_runtime(tx, RUNTIME_ROLE)
    users = [(f"u{i:03d}", "") for i in range(args.clients)]
    users = [(u, api_tokens.create(backend, u).secret) for u, _ in users]
    writer_token = api_tokens.create(backend, "killed-writer").secret
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    err = open(work / "gateway.err", "w")  # noqa: SIM115 - closed at the end
    gateway = subprocess.Popen(
        [str(BIGMIND), "serve", "--http", "--port", str(port)], env=env, stderr=err
    )
    abort_at = time.monotonic() + args.seconds + 300
    results: list[dict[str, Any]] = []
    kill_log = str(work / "killed.jsonl")
    kills = 0
    try:
        _wait_for(url, abort_at)
        progress(f"gateway up on {url} ({args.backend}); {args.clients} clients × {args.seconds} s")
        until_wall = time.monotonic() + args.seconds
        ctx = mp.get_context("spawn")
        out = ctx.Queue()
        share = [users[i :: args.processes] for i in range(args.processes)]
        procs = [
            ctx.Process(target=client_process, args=(url, part, until_wall, out))
            for part in share
            if part
        ]
        for proc in procs:
            proc.start()
        # The writer killed mid-call, --kills times: once it has a few more acknowledgements,
        # at a random moment among its calls.
        for _ in range(args.kills):
            w = ctx.Process(
                target=killed_writer, args=(url, "killed-writer", writer_token, kill_log)
            )
            w.start()
            before = _lines(kill_log)
            while _lines(kill_log) < before + 5 and time.monotonic() < until_wall and w.is_alive():
                time.sleep(0.05)
            time.sleep(random.uniform(0, 0.2))
            os.kill(w.pid or 0, signal.SIGKILL)
            w.join(10)
            kills += 1
        for _ in procs:
            results += out.get(timeout=max(1.0, abort_at - time.monotonic()))
        for proc in procs:
            proc.join(30)
    finally:
        gateway.send_signal(signal.SIGTERM)
        try:
            gateway.wait(15)
        except subprocess.TimeoutExpired:
            gateway.kill()
            gateway.wait(5)
        err.close()
    # Every acknowledged fact must be in the database, as its user's, with its marker.
    lost = 0
    checked = 0
    by_user: dict[str, list[tuple[int, str]]] = {r["user"]: r["acked"] for r in results}
    log_text = Path(kill_log).read_text() if Path(kill_log).exists() else ""
    # A line cut short by the kill was never complete: its write was acknowledged, not logged.
    killed_acks = [
        (int(a), str(m))
        for a, m in (json.loads(ln) for ln in log_text.splitlines() if ln.endswith("]"))
    ]
    by_user["killed-writer"] = killed_acks
    for user, acks in by_user.items():
        store = Store(backend, user, mode=settings.mode)
        for fact_id, marker in acks:
            checked += 1
            found = store.facts.get(int(fact_id))
            if found is None or marker not in found.fact:
                lost += 1
    backend.close()
    if pg is not None and owner_url:
        pg.drop_database(owner_url)
        pg.close()
    lat = {op: [x for r in results for x in r["lat"][op]] for op in OPS}
    every = sorted(x for v in lat.values() for x in v)
    calls = len(every)
    errors = sum(r["errors"] for r in results)
    report = {
        "backend": args.backend,
        "clients": args.clients,
        "seconds": args.seconds,
        "calls": calls,
        "calls_per_s": round(calls / args.seconds, 1),
        "errors": errors,
        "error_messages": [m for r in results for m in r["messages"]][:KEEP_MESSAGES],
        "acknowledged_facts_checked": checked,
        "lost_writes": lost,
        "writer_kills": kills,
        "killed_writer_acks": len(killed_acks),
        "p50_ms": _ms(every, 0.50),
        "p95_ms": _ms(every, 0.95),
        "p99_ms": _ms(every, 0.99),
        "per_op": {
            op: {"n": len(v), "p50_ms": _ms(sorted(v), 0.5), "p95_ms": _ms(sorted(v), 0.95)}
            for op, v in lat.items()
        },
        "gateway_stderr_tail": (work / "gateway.err").read_text()[-1500:],
    }
    print(json.dumps(report, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    if calls == 0:  # nothing was tested: the clients never got going within --seconds
        progress("no client finished a call: give the run more --seconds on a busy machine")
        return 1
    return 0 if errors == 0 and lost == 0 else 1


def _lines(path: str) -> int:
    try:
        return Path(path).read_text().count("\n")
    except FileNotFoundError:
        return 0


def _ms(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    if len(values) == 1:
        return round(values[0] * 1000, 1)
    return round(
        statistics.quantiles(values, n=100, method="inclusive")[int(q * 100) - 1] * 1000, 1
    )


def _wait_for(url: str, abort_at: float) -> None:
    import httpx2

    while time.monotonic() < abort_at:
        try:
            if httpx2.get(f"{url}/login", timeout=2).status_code == 200:
                return
        except httpx2.HTTPError:
            pass
        time.sleep(0.2)
    raise SystemExit("the gateway did not start")


if __name__ == "__main__":
    sys.exit(main())
