"""Secrets stated in prose: "the password for the staging database is …", "pw for jenkins:
…", "the stripe secret is …", "das Passwort ist …", "le mot de passe est …", a value on the
next line ("the password is:⏎…").

A statement is a subject (a password word in one of a few languages, ``secret``, or a
qualified key or token: ``api key``, ``access token``…), up to six words that do not change
what it is about ("for the staging database", not "reset", "policy" or "length"), a connector
(``is``, ``was``, ``ist``, ``est``, ``es``, ``:``, ``=``…) and one word. The word counts when
it looks made rather than written: a digit or a symbol in it (a password), 8+ characters of
them (a secret), a random string (a key or a token), or quoted. "The password is required",
"the secret manager is Vault", "token 9fceb02d…" stay as they are.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bigmind.redaction.detectors import (
    _CAMEL_WORDS,
    _DOTTED,
    _KEYWORDS,
    _NAME_LIKE,
    _NOT_VALUE,
    _UNQUOTED,
    _classify,
    _placeholder,
    _positions,
    _random,
    _words,
    next_line,
)
from bigmind.redaction.findings import ASSIGNED, Finding

# Searched in the lowercased text; the subject is then read around each hit.
_HINTS = (
    "pass",  # password, passwort, passwd, passphrase, passcode, mot de passe
    "pw",  # pw, pwd
    "secret",
    "kennwort",
    "contrase",
    "senha",
    "wachtwoord",
    "hasło",
    "haslo",
    "пароль",
    "key",
    "token",
)
_HINT_SET = frozenset(_HINTS)
# The words the assignments and the statements start from, looked for once.
WORDS = tuple(sorted(_HINT_SET | set(_KEYWORDS)))
_PASSWORD = re.compile(
    r"(?:pass(?:word|wort|wd|phrase|code)s?|pass phrase|kennwort|pwd?|mot de passe"
    r"|contrase(?:ñ|n)a|senha|wachtwoord|has(?:ł|l)o|пароль)(?![\w-])"
)
_SECRET = re.compile(r"secret(?![\w-])")
_KEY = re.compile(r"(?:key|token)(?![\w-])")
# What a key or a token must be called to be one: an API key, not a cache key.
_QUALIFIED = re.compile(
    r"(?:api|access|secret|deploy|bot|auth|refresh|signing|master|private|client|service"
    r"|personal access|license|app|account)[ -]$"
)
_PREDICATE = re.compile(
    r"(?P<mid>(?:[ \t]+[^\s:=.,;!?()\[\]{}\"`]+){0,6}?)[ \t]*"
    r"(?P<op>:(?![/\\:=])|=(?![=>])|->|→|=>"
    r"|(?<=[ \t])(?:is now|is set to|was set to|set to|changed to|reset to|is|was|ist|lautet"
    r"|est|es|è|é|är|er)(?=[ \t\r\n:]))"
    r"(?:[ \t]*:(?![/\\:=]))?[ \t]*"
)
# A word between the subject and the connector that makes the sentence about something else.
_ABOUT = _NOT_VALUE | _words(
    "hash hashes hashing hashed policy policies rules requirement requirements complexity"
    " manager managers management rotation rotating rotated reset resets storage stored scanning"
    " scanner scan detection encryption encrypted protection protected check checks checking"
    " input inputs form forms dialog screen box auth authentication login logins flow hint"
    " hints strength age expiry lifetime history generator generation attempt attempts"
    " prompt prompts option options argument arguments parameter parameters param params"
    " variable setting settings value values key keys token tokens"
    " not never no only also must should can may will would could"
)
_LANGUAGES = ("passwort", "kennwort", "mot de passe", "senha", "wachtwoord", "has", "пароль")
_SYMBOLS = frozenset("!@#$%^&*+=?~|<>")
_QUALITY = re.compile(r"[\w.]+-[a-z]{3,}")  # base64-encoded, UUID4-based, v2-only
_MEASURE = re.compile(r"v?\d+(?:\.\d+)+|\d+\+?(?:[a-z]{1,6})?|\d+(?:-|\s)?(?:chars?|bytes?|bits?)")


def statements(
    text: str, low: str, spots: Sequence[tuple[int, str]] | None = None
) -> list[Finding]:
    """The values of the statements about secrets in ``text`` (``low``: lowercased;
    ``spots``: where :data:`WORDS` occur in it, if the caller looked)."""
    found: list[Finding] = []
    done = 0
    if spots is None:
        spots = _positions(low, _HINTS)
    for at, hint in spots:
        if at < done or hint not in _HINT_SET:
            continue
        subject = _subject(low, at, hint)
        if subject is None:
            continue
        kind, end = subject
        stated = _stated(text, low, end, kind, low[at:end])
        if stated is not None:
            found.append(stated)
            done = stated.end
    return found


def _subject(low: str, at: int, hint: str) -> tuple[str, int] | None:
    """The kind of secret a subject at ``at`` names, and where it ends; None if it is part
    of a longer word or a name (db_password is an assignment's)."""
    if at > 0 and (low[at - 1].isalnum() or low[at - 1] in "_-."):
        return None
    if hint in ("key", "token"):
        if _QUALIFIED.search(low, max(0, at - 20), at) is None:
            return None
        m = _KEY.match(low, at)
        return ("key", m.end()) if m else None
    if hint == "secret":
        m = _SECRET.match(low, at)
        return ("secret", m.end()) if m else None
    m = _PASSWORD.match(low, at)
    if m is None and hint == "pass" and at >= 7 and low.startswith("mot de ", at - 7):
        m = _PASSWORD.match(low, at - 7)
    return ("password", m.end()) if m else None


def _stated(text: str, low: str, at: int, kind: str, subject: str) -> Finding | None:
    p = _PREDICATE.match(low, at)
    if p is None:
        return None
    mid = p["mid"].split()
    if any(w.strip("'’") in _ABOUT for w in mid):
        return None
    op = p["op"]
    if not mid and op in (":", "=") and not subject.startswith(_LANGUAGES):
        return None  # password: …, secret = …: an assignment's (detectors._assignments)
    start = p.end()
    if start < len(text) and text[start] in "\r\n":
        span = next_line(text, start)
        if span is None:
            return None
        v_start, v_end, quoted = span
    else:
        span = _word(text, start)
        if span is None:
            return None
        v_start, v_end, quoted = span
    if not _looks_made(text[v_start:v_end], kind, quoted):
        return None
    if not quoted and text.startswith("(", v_end):
        return None  # a call: sha256(salt + pw)
    return Finding(v_start, v_end, "secret" if kind == "key" else kind, ASSIGNED)


def _word(text: str, at: int) -> tuple[int, int, bool] | None:
    """The word at ``at``: quoted (to its closing quote on the line) or up to a space, less
    the punctuation that ends a sentence and markdown's emphasis."""
    if at >= len(text):
        return None
    quote = text[at]
    if quote in "\"'`“‘«":
        close_quote = {"“": "”", "‘": "’", "«": "»"}.get(quote, quote)
        eol = text.find("\n", at)
        eol = len(text) if eol < 0 else eol
        close = text.find(close_quote, at + 1, eol)
        if close > at + 1:
            return at + 1, close, True
        return None
    m = _UNQUOTED.match(text, at)
    if m is None:
        return None
    start, end = at, m.end()
    if not text.endswith("..", start, end):
        while end > start and text[end - 1] in ".:!?”’»":
            end -= 1
    while end - start > 2 and text[start] == "*" and text[end - 1] == "*":
        start, end = start + 1, end - 1  # **hunter2**
    return (start, end, False) if end > start else None


def _looks_made(value: str, kind: str, quoted: bool) -> bool:
    """Whether a stated value is a secret rather than a word, a name, a path or a measure."""
    if _placeholder(value) or (" " in value and not quoted):
        return False
    if value.startswith(("/", "./", "../", "~/", "http://", "https://")) and "@" not in value:
        return False
    if _DOTTED.fullmatch(value) or _CAMEL_WORDS.fullmatch(value):
        return False  # settings.DB_PASSWORD, PasswordHasherClass
    if _NAME_LIKE.fullmatch(value) and _classify(value) is not None:
        return False  # DB_PASSWORD: another name
    if kind == "key":
        return _random(value)
    if quoted:
        return len(value) >= 4 and (" " not in value or kind == "password")
    if kind == "password" and value.isdigit():
        return len(value) >= 6
    if _MEASURE.fullmatch(value.lower()) or _QUALITY.fullmatch(value):
        return False  # 12, 16+, 32bytes, 2.0: a length or a version; base64-encoded: a word
    made = any(c.isdigit() for c in value) or any(c in _SYMBOLS for c in value)
    if "/" in value and not made:
        return False  # vault/kv/prod: where it is kept
    return made and len(value) >= (6 if kind == "password" else 8)
