"""The secrets corpus: fixture sentences with fake secrets generated in each provider's format.

``tests/fixtures/secrets/secrets.txt`` holds sentences with markers: ``⟦kind⟧`` becomes a fake
secret of that kind made here (seeded, so every run sees the same values), ``⟦=text⟧`` is a
fake password written in the file. Nothing token-shaped is committed, so no scanner mistakes
the fixtures for a leak; every value is random and belongs to no account.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import random
import re
import string
from dataclasses import dataclass, field
from pathlib import Path

from bigmind.models import now_ts
from bigmind.storage.attempts_table import Attempts
from bigmind.storage.db import Backend
from bigmind.storage.fact_files_table import FactFiles
from bigmind.storage.fact_history_table import FactHistory
from bigmind.storage.focus_table import FocusAnnouncements
from bigmind.storage.hypotheses_table import Hypotheses
from bigmind.storage.knowledge_table import Knowledge
from bigmind.storage.people_table import People
from bigmind.storage.reminders_table import Reminders
from bigmind.storage.savings_table import Savings
from bigmind.storage.store import Store

HERE = Path(__file__).parent / "fixtures" / "secrets"
MARK = re.compile(r"⟦(=?)([^⟧]+)⟧")
ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"


@dataclass(frozen=True)
class Case:
    text: str
    secrets: tuple[str, ...]  # each must be absent once the text is redacted
    kinds: tuple[str, ...]  # the generator kinds ("password" for a written one)


class Fakes:
    """Fake secrets in the formats detectors know, from a seeded generator."""

    def __init__(self, seed: int = 15) -> None:
        self.r = random.Random(seed)

    def chars(self, alphabet: str, n: int) -> str:
        return "".join(self.r.choice(alphabet) for _ in range(n))

    def pem(self, label: str, lines: int = 12, sep: str = "\n") -> tuple[str, list[str]]:
        body = [self.chars(B64, 64) for _ in range(lines)] + [self.chars(B64, 24) + "=="]
        text = sep.join([f"-----BEGIN {label}-----", *body, f"-----END {label}-----"])
        return text, body

    def jwt(self) -> tuple[str, list[str]]:
        def part(obj: object) -> str:
            raw = json.dumps(obj, separators=(",", ":")).encode()
            return base64.urlsafe_b64encode(raw).decode().rstrip("=")

        payload = {"sub": self.chars(string.digits, 10), "name": "Dana Test", "iat": 1716239022}
        sig = base64.urlsafe_b64encode(self.r.randbytes(32)).decode().rstrip("=")
        token = ".".join([part({"alg": "HS256", "typ": "JWT"}), part(payload), sig])
        return token, [token, sig]

    def make(self, kind: str) -> tuple[str, list[str]]:
        """A fake secret of ``kind`` and the strings that must not survive redaction."""
        c = self.chars
        simple = {
            "aws-access-key": lambda: "AKIA" + c(string.ascii_uppercase + "234567", 16),
            "aws-secret-key": lambda: c(B64, 40),
            "github-token": lambda: "ghp_" + c(ALNUM, 36),
            "github-pat": lambda: "github_pat_11" + c(ALNUM, 20) + "_" + c(ALNUM, 59),
            "gitlab-token": lambda: "glpat-" + c(URLSAFE, 20),
            "slack-bot-token": lambda: (
                f"xoxb-{c(string.digits, 11)}-{c(string.digits, 13)}-" + c(ALNUM, 24)
            ),
            "slack-webhook": lambda: (
                "https://hooks.slack.com/services/T"
                + c(string.ascii_uppercase + string.digits, 8)
                + "/B"
                + c(string.ascii_uppercase + string.digits, 10)
                + "/"
                + c(ALNUM, 24)
            ),
            "stripe-live-key": lambda: "sk_live_" + c(ALNUM, 24),
            "stripe-restricted-key": lambda: "rk_live_" + c(ALNUM, 24),
            "openai-key": lambda: "sk-" + c(ALNUM, 20) + "T3BlbkFJ" + c(ALNUM, 20),
            "openai-project-key": lambda: "sk-proj-" + c(URLSAFE, 40) + "T3BlbkFJ" + c(URLSAFE, 40),
            "anthropic-key": lambda: "sk-ant-api03-" + c(URLSAFE, 93) + "AA",
            "google-api-key": lambda: "AIza" + c(URLSAFE, 35),
            "sendgrid-key": lambda: "SG." + c(URLSAFE, 22) + "." + c(URLSAFE, 43),
            "twilio-account": lambda: "AC" + c(HEX, 32),
            "twilio-api-key": lambda: "SK" + c(HEX, 32),
            "npm-token": lambda: "npm_" + c(ALNUM, 36),
            "pypi-token": lambda: "pypi-AgEIcHlwaS5vcmc" + c(URLSAFE, 120),
            "discord-token": lambda: "M" + c(ALNUM, 23) + "." + c(ALNUM, 6) + "." + c(URLSAFE, 27),
            "azure-account-key": lambda: c(B64, 86) + "==",
            "mailchimp-key": lambda: c(HEX, 32) + "-us" + str(self.r.randint(1, 20)),
            "square-secret": lambda: "sq0csp-" + c(URLSAFE, 43),
            "telegram-token": lambda: (
                str(self.r.randint(100_000_000, 999_999_999)) + ":AA" + c(URLSAFE, 33)
            ),
            "bearer-opaque": lambda: c(ALNUM, 40),
            "django-secret": lambda: c(
                string.ascii_lowercase + string.digits + "!@#%^&*(-_=+)", 50
            ),
            "hex-secret": lambda: c(HEX, 64),
            "base64-secret": lambda: c(B64, 43) + "=",
        }
        if kind in simple:
            value = simple[kind]()
            return value, [value]
        if kind == "jwt":
            return self.jwt()
        if kind == "basic-auth":
            value = base64.b64encode(f"deploy:{c(ALNUM, 14)}".encode()).decode()
            return value, [value]
        if kind == "rsa-private-key":
            text, body = self.pem("RSA PRIVATE KEY")
            return text, body
        if kind == "ec-private-key":
            text, body = self.pem("EC PRIVATE KEY", 3)
            return text, body
        if kind == "openssh-private-key":
            text, body = self.pem("OPENSSH PRIVATE KEY", 6)
            return text, body
        if kind == "json-private-key":
            text, body = self.pem("PRIVATE KEY", 8, sep="\\n")
            return text + "\\n", body
        raise KeyError(kind)


def _lines(name: str) -> list[str]:
    raw = (HERE / name).read_text(encoding="utf-8").splitlines()
    return [line.replace("\\n", "\n") for line in raw if line and not line.startswith("# ")]


def secret_cases(seed: int = 15) -> list[Case]:
    """The secrets corpus, its markers filled in."""
    fakes = Fakes(seed)
    return [_fill(line, fakes) for line in _lines("secrets.txt")]


def _fill(line: str, fakes: Fakes) -> Case:
    secrets: list[str] = []
    kinds: list[str] = []
    made: dict[str, str] = {}

    def fill(m: re.Match[str]) -> str:
        if m[1]:
            secrets.append(m[2])
            kinds.append("password")
            return m[2]
        kind = m[2]
        if kind not in made:  # a kind twice on a line: the same secret pasted twice
            made[kind], must_go = fakes.make(kind)
            secrets.extend(must_go)
            kinds.append(kind)
        return made[kind]

    text = MARK.sub(fill, line)
    return Case(text, tuple(secrets), tuple(kinds))


def ordinary_lines() -> list[str]:
    """Ordinary engineering text, which redaction must (almost always) leave alone."""
    return _lines("ordinary.txt")


def database_text(backend: Backend) -> str:
    """Every cell of every table (full-text and vector tables included), lowercased: what a
    secret must be absent from."""
    if backend.dialect == "postgresql":
        sql = (
            "SELECT table_name AS t FROM information_schema.tables"
            " WHERE table_schema = current_schema()"
        )
    else:
        sql = "SELECT name AS t FROM sqlite_master WHERE type = 'table'"
    cells: list[str] = []
    for row in backend.query(sql):
        for r in backend.query(f'SELECT * FROM "{row["t"]}"'):
            for v in r.values():
                cells.append(v.decode("latin-1") if isinstance(v, bytes) else str(v))
    return "\n".join(cells).lower()


@dataclass
class Planted:
    """Secrets written raw: how many, and the strings that must go, per table."""

    count: int = 0
    by_table: dict[str, list[str]] = field(default_factory=dict)

    @property
    def strings(self) -> list[str]:
        return [s for values in self.by_table.values() for s in values]


def seed_raw(store: Store, fakes: Fakes) -> Planted:
    """A secret in every free-text column of every memory table, written with the table
    modules directly, unredacted, as a version before redaction would have."""
    planted = Planted()

    def secret(table: str, kind: str) -> str:
        value, must_go = fakes.make(kind)
        planted.by_table.setdefault(table, []).extend(must_go)
        planted.count += 1
        return value

    ts = now_ts()
    sid = "5e55e55e-0000-4000-8000-000000000001"
    with store.db.transaction() as tx:
        store.sessions.insert(tx, sid, ts)
        store.sessions.end(
            tx,
            sid,
            ts,
            one_liner=f"Rotated {secret('sessions', 'github-token')}",
            topics="deploy",
            outcome=f"Outcome: STRIPE_SECRET_KEY={secret('sessions', 'stripe-live-key')}",
            importance=5,
            has_tier2=True,
        )
        store.sessions.save_summary(
            tx,
            sid,
            f"The deploy summary mentions {secret('session_summaries', 'aws-access-key')}",
            f"- token {secret('session_summaries', 'slack-bot-token')}",
            f"- export OPENAI_API_KEY={secret('session_summaries', 'openai-key')}",
            ts,
        )
        fact = store.facts.insert(
            tx,
            category="codebase",
            fact=f"The CI uses {secret('facts', 'gitlab-token')} to push images",
            source_session=sid,
            confidence=1.0,
            importance=5,
            digest="raw",
            ts=ts,
        )
        old = store.facts.insert(
            tx,
            category="codebase",
            fact=f"Old deploy key {secret('facts', 'aws-access-key')}",
            source_session=sid,
            confidence=1.0,
            importance=5,
            digest="raw-old",
            ts=ts,
        )
        store.facts.deprecate(tx, old.id, f"rotated: {secret('facts', 'npm-token')}", ts)
        earlier = dataclasses.replace(
            fact, fact=f"The CI used {secret('fact_history', 'github-token')} before"
        )
        FactHistory(store.db, store.uid).file(
            tx, earlier, f"rotated {secret('fact_history', 'slack-bot-token')}", ts
        )
        store.chunks.append(
            tx,
            sid,
            "user",
            f"Here it is:\n{secret('conversation_chunks', 'rsa-private-key')}",
            f"Bearer {secret('conversation_chunks', 'jwt')}",
            ts,
        )
        h = Hypotheses(store.db, store.uid).add(
            tx, sid, f"The leak came from {secret('hypotheses', 'sendgrid-key')}", 0.7, ts
        )
        Hypotheses(store.db, store.uid).set_status(
            tx, h, "confirmed", f"found {secret('hypotheses', 'twilio-api-key')}", ts
        )
        Attempts(store.db, store.uid).add(
            tx,
            sid,
            f"Deploy with {secret('attempts', 'npm-token')}",
            "failed",
            f"{secret('attempts', 'github-pat')} lacked a scope",
            ts,
        )
        Reminders(store.db, store.uid).add(
            tx,
            sid,
            f"Rotate {secret('reminders', 'stripe-restricted-key')} before Friday",
            None,
            ts,
        )
        People(store.db, store.uid).add(
            tx,
            "dana",
            {
                "display_name": "Dana",
                "role": f"owner of {secret('people', 'google-api-key')}",
                "team": "payments",
                "expertise": "billing",
                "notes": f"her PyPI token was {secret('people', 'pypi-token')}",
            },
            ts,
        )
        FocusAnnouncements(store.db, store.uid).add(
            tx,
            sid,
            f"Rotating {secret('focus_announcements', 'square-secret')}",
            ["src/app.py", f"deploy/{secret('focus_announcements', 'github-token')}.env"],
            None,
            ts,
        )
        FactFiles(store.db, store.uid).add(
            tx, fact.id, ["src/ci.py", f"keys/{secret('fact_files', 'aws-access-key')}.pem"], ts
        )
        Savings(store.db, store.uid).add(
            tx, sid, f"recalled {secret('token_saves', 'mailchimp-key')}", 100, "recall", ts
        )
        store.profiles.update(
            tx,
            {
                "role": "backend",
                "preferences": f"Use {secret('identity_profile', 'anthropic-key')} locally",
                "pinned_facts": f'- DB password="{secret("identity_profile", "base64-secret")}"',
            },
            ts,
        )
        entry = Knowledge(store.db, store.uid).add(
            tx,
            "standard",
            "Registry access",
            f"Push with {secret('global_knowledge', 'discord-token')}",
            5,
            sid,
            ts,
            approved=True,
        )
        Knowledge(store.db, store.uid).deprecate(
            tx, entry, f"leaked {secret('global_knowledge', 'telegram-token')}", ts
        )
    assert fact.id
    return planted


# -- secrets in ordinary phrasing --------------------------------------------------------------
@dataclass(frozen=True)
class Placement:
    kind: str
    text: str
    secrets: tuple[str, ...]  # each must be absent once the text is stored


WORDS = ("Harbor", "Maple", "Cobalt", "Falcon", "Juniper", "Quartz", "Willow", "Ember")
PLACEMENTS = (
    "prose",
    "prose-de",
    "prose-es",
    "prose-fr",
    "pw-for",
    "service-secret",
    "next-line",
    "split-newline",
    "split-zero-width",
    "split-bidi",
    "full-width",
    "base64-url",
    "percent-url",
    "short-password",
    "aws-secret-prose",
    "plain-token",
)


def placements(fakes: Fakes) -> list[Placement]:
    """One secret in each way a sentence may hold one (:data:`PLACEMENTS`), fresh values on
    every call."""
    r = fakes.r

    def pw() -> str:
        return f"{r.choice(WORDS)}-{r.choice(WORDS)}-{r.randint(1000, 9999)}"

    key = fakes.make("aws-access-key")[0]
    token = fakes.make("github-token")[0]
    rlo_key = fakes.make("aws-access-key")[0]
    secret = fakes.chars(ALNUM, 30) + str(r.randint(10, 99))
    short = fakes.chars(string.ascii_lowercase, 6) + str(r.randint(2, 9))
    url_pw, b64_pw, pct_pw = pw(), pw(), pw()
    b64 = base64.b64encode(f"postgres://app:{b64_pw}@db.internal:5432/payments".encode()).decode()
    out = [
        ("prose", "The password for the staging database is {}, rotate it after the demo.", pw()),
        ("prose-de", "Das Passwort für den Staging-Server ist {}.", pw()),
        ("prose-es", "La contraseña de la base de datos es {} hasta el lunes.", pw()),
        ("prose-fr", "Le mot de passe de l'admin est {} jusqu'à lundi.", pw()),
        ("pw-for", "pw for jenkins: {}", pw()),
        ("service-secret", "the stripe secret is {}", secret),
        ("next-line", "DB_PASSWORD=\n{}", pw()),
    ]
    cases = [Placement(kind, text.format(value), (value,)) for kind, text, value in out]
    cases += [
        Placement(
            "split-newline",
            f"The deploy key is {key[:12]}\n{key[12:]} (us-east-1).",
            (key[:12], key[12:]),
        ),
        Placement(
            "split-zero-width",
            f"CI pushes with {token[:14]}\u200b{token[14:]} since May.",
            (token[:14], token[14:]),
        ),
        Placement(
            "split-bidi", f"Rotate {rlo_key[:8]}\u202e{rlo_key[8:]} on Friday.", (rlo_key[8:],)
        ),
        Placement("full-width", f"ｐａｓｓｗｏｒｄ：{url_pw}", (url_pw,)),
        Placement("base64-url", f"DSN (base64) {b64}", (b64, b64_pw)),
        Placement(
            "percent-url",
            f"next=postgres%3A%2F%2Fapp%3A{pct_pw}%40db.internal%2Fpayments",
            (pct_pw,),
        ),
        Placement("short-password", f"log in with password={short} as admin", (short,)),
        Placement(
            "aws-secret-prose",
            f"the AWS secret access key is {(aws := fakes.make('aws-secret-key')[0])}",
            (aws,),
        ),
        Placement("plain-token", f"token {(ghp := fakes.make('github-token')[0])}", (ghp,)),
    ]
    assert [c.kind for c in cases] == list(PLACEMENTS)
    return cases
