"""The secrets corpus: fixture sentences with fake secrets generated in each provider's format.

``tests/fixtures/secrets/secrets.txt`` holds sentences with markers: ``⟦kind⟧`` becomes a fake
secret of that kind made here (seeded, so every run sees the same values), ``⟦=text⟧`` is a
fake password written in the file. Nothing token-shaped is committed, so no scanner mistakes
the fixtures for a leak; every value is random and belongs to no account.
"""

from __future__ import annotations

import base64
import json
import random
import re
import string
from dataclasses import dataclass
from pathlib import Path

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
