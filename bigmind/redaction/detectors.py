"""The detectors: provider formats, private keys, passwords in URLs and command lines,
Authorization headers, and values assigned to secret-sounding names.

Built on detect-secrets' plugins: their patterns for provider tokens (AWS, GitHub, GitLab,
Slack, Stripe, OpenAI, SendGrid, Twilio, npm, PyPI, Discord, Azure storage, Mailchimp, Square,
Telegram), private keys, JWTs (with the plugin's validity check) and passwords in URLs; the
KeywordDetector's list of secret-sounding names for assignments (``password=``, ``api_key:``,
``"secret": "…"``, ``export TOKEN=…``, ``--password …``, a value on the line after
``DB_PASSWORD=``); its heuristics (templated and non-alphanumeric values) and its Shannon
entropy for values under generic names (``*_token``, ``*_key``, ``signature``…). Redaction
needs every match and its exact span where the plugins' ``analyze_string`` yields values, so
their compiled patterns run here with ``finditer``.

Each detector declares literal hints that any of its matches contains; a text with none of
them costs a few substring searches, and detect-secrets is imported only when a hint appears.
"""

from __future__ import annotations

import base64
import binascii
import functools
import importlib
import math
import re
from collections import Counter
from collections.abc import Callable, Container, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bigmind.redaction.findings import ASSIGNED as _ASSIGNED
from bigmind.redaction.findings import HEADER as _HEADER
from bigmind.redaction.findings import Finding


# -- the detectors ----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Spec:
    """One detect-secrets pattern (``plugin``'s ``denylist[index]``) or one of ours (``regex``):
    the kind it finds, the group holding the secret, and literal hints, one of which every match
    contains (``lower``: searched in the lowercased text)."""

    kind: str
    hints: tuple[str, ...]
    plugin: str = ""  # "module:Class" under detect_secrets.plugins
    index: int = 0
    regex: str = ""
    group: int = 0
    lower: bool = False
    bounded: bool = False  # no letter or digit right before or after the match
    extend: bool = False  # the match may stop short of the token's end (JWT)
    after: str = ""  # the secret starts after this text of the match (AccountKey=)
    pre: re.Pattern[str] | None = None  # without hints: a cheap locator of candidates


_AWS_IDS = ("A3T", "ABIA", "ACCA", "AKIA", "ASIA")
_SPECS: tuple[_Spec, ...] = (
    _Spec("aws-access-key", _AWS_IDS, "aws:AWSKeyDetector", 0, bounded=True),
    _Spec("aws-secret-key", ("aws",), "aws:AWSKeyDetector", 1, group=1, lower=True),
    _Spec(
        "github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), "github_token:GitHubTokenDetector"
    ),
    *(
        _Spec("gitlab-token", hints, "gitlab_token:GitLabTokenDetector", i)
        for i, hints in enumerate(
            (
                ("glpat-", "gldt-", "glft-", "glsoat-", "glrt-"),
                ("GR1348941",),
                ("glcbt-",),
                ("glimt-",),
                ("glptt-",),
                ("glagent-",),
                ("gloas-",),
            )
        )
    ),
    _Spec("slack-token", ("xox",), "slack:SlackDetector", 0, lower=True),
    _Spec("slack-webhook", ("hooks.slack.com",), "slack:SlackDetector", 1, lower=True),
    _Spec("stripe-key", ("k_live_",), "stripe:StripeDetector"),
    _Spec("openai-key", ("T3BlbkFJ",), "openai:OpenAIDetector"),
    _Spec("jwt", ("eyJ",), "jwt:JwtTokenDetector", extend=True),
    _Spec("sendgrid-key", ("SG.",), "sendgrid:SendGridDetector"),
    _Spec("twilio-key", ("AC",), "twilio:TwilioKeyDetector", 0, bounded=True),
    _Spec("twilio-key", ("SK",), "twilio:TwilioKeyDetector", 1, bounded=True),
    _Spec("npm-token", ("_authToken",), "npm:NpmDetector", group=1),
    _Spec("pypi-token", ("pypi-AgE",), "pypi_token:PypiTokenDetector", 0),
    _Spec("pypi-token", ("pypi-AgE",), "pypi_token:PypiTokenDetector", 1),
    _Spec(
        "discord-token",
        (),
        "discord:DiscordBotTokenDetector",
        bounded=True,
        pre=re.compile(r"\.[\w-]{6}\.[\w-]{27}"),
    ),
    _Spec(
        "azure-storage-key",
        ("AccountKey=",),
        "azure_storage_key:AzureStorageKeyDetector",
        after="AccountKey=",
    ),
    _Spec("mailchimp-key", ("-us",), "mailchimp:MailchimpDetector", bounded=True),
    _Spec("square-secret", ("sq0csp-",), "square_oauth:SquareOAuthDetector"),
    _Spec(
        "telegram-token",
        (),
        "telegram_token:TelegramBotTokenDetector",
        bounded=True,
        pre=re.compile(r":(?<=\d{8}:)[\w-]{35}"),
    ),
    # Formats detect-secrets 1.5.0 does not know.
    _Spec("github-token", ("github_pat_",), regex=r"github_pat_[A-Za-z0-9_]{40,}"),
    _Spec("stripe-key", ("k_test_", "k_live_"), regex=r"\b[rsp]k_(?:test|live)_[0-9a-zA-Z]{20,}"),
    _Spec("openai-key", ("sk-proj-",), regex=r"sk-proj-[A-Za-z0-9_\-]{20,}"),
    _Spec("anthropic-key", ("sk-ant-",), regex=r"sk-ant-[a-z]+\d*-[A-Za-z0-9_\-]{20,}"),
    _Spec("google-api-key", ("AIza",), regex=r"\bAIza[0-9A-Za-z_\-]{35}", bounded=True),
    _Spec("npm-token", ("npm_",), regex=r"\bnpm_[A-Za-z0-9]{36}", bounded=True),
    _Spec("slack-token", ("xapp-",), regex=r"xapp-\d-[A-Za-z0-9]+-\d+-[A-Za-z0-9]+"),
)


@dataclass(frozen=True, slots=True)
class _Detector:
    spec: _Spec
    pattern: re.Pattern[str]
    valid: Callable[[str], bool] | None


@functools.cache
def _detectors() -> tuple[_Detector, ...]:
    """The compiled patterns: detect-secrets is imported here, on the first text with a hint."""
    out = []
    for spec in _SPECS:
        valid = None
        if spec.plugin:
            module, _, name = spec.plugin.partition(":")
            cls: Any = getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), name)
            pattern: re.Pattern[str] = list(cls.denylist)[spec.index]
            valid = getattr(cls, "is_formally_valid", None)  # the JWT plugin's check
        else:
            pattern = re.compile(spec.regex)
        out.append(_Detector(spec, pattern, valid))
    return tuple(out)


@functools.cache
def _heuristics() -> Any:
    """detect-secrets' false-positive filters (imported with the plugins)."""
    return importlib.import_module("detect_secrets.filters.heuristic")


@functools.cache
def _entropy() -> tuple[Callable[[str], float], Callable[[str], float]]:
    """Shannon entropy over the base64 and the hex alphabets, as detect-secrets computes it."""
    module = importlib.import_module("detect_secrets.plugins.high_entropy_strings")
    return (
        module.Base64HighEntropyString().calculate_shannon_entropy,
        module.HexHighEntropyString().calculate_shannon_entropy,
    )


@functools.cache
def _secret_names() -> re.Pattern[str]:
    """detect-secrets' KeywordDetector DENYLIST (api_key, secret, private_key…) as whole parts
    of a snake_case name."""
    keyword = importlib.import_module("detect_secrets.plugins.keyword")
    words = "|".join(keyword.DENYLIST)
    return re.compile(rf"(?:^|_)(?:{words})s?(?:_|$)")


def _positions(source: str, words: Sequence[str]) -> list[tuple[int, str]]:
    """Where each of ``words`` occurs in ``source``, in order (substring searches are far
    cheaper than a regular expression's alternation)."""
    out = []
    for word in [w for w in words if w in source]:
        at = source.find(word)
        while at >= 0:
            out.append((at, word))
            at = source.find(word, at + 1)
    out.sort()
    return out


WINDOW = 2_048  # characters read either side of a hint on a very long line


def _hint_index() -> tuple[tuple[str, bool, tuple[int, ...]], ...]:
    """Each distinct hint, whether it is searched lowercased, and the specs it stands for."""
    index: dict[tuple[str, bool], list[int]] = {}
    for i, spec in enumerate(_SPECS):
        for hint in spec.hints:
            index.setdefault((hint, spec.lower), []).append(i)
    return tuple((hint, lower, tuple(specs)) for (hint, lower), specs in index.items())


_HINTS = _hint_index()
_CASED = tuple(e for e in _HINTS if not e[1])  # searched in the text as written
_LOWER = tuple(e for e in _HINTS if e[1])  # searched lowercased
_LOCATED = tuple((i, spec.pre) for i, spec in enumerate(_SPECS) if spec.pre is not None)


def _anchors(text: str, low: str, only: Container[int] | None = None) -> dict[int, list[int]]:
    """Per spec (by index; ``only`` these) with a possible match: where its hints occur, or
    its locator matches. One substring test per distinct hint when none occurs."""
    out: dict[int, list[int]] = {}
    present = [e for e in _CASED if e[0] in text] + [e for e in _LOWER if e[0] in low]
    for hint, lower, specs in present:
        if only is not None and not any(i in only for i in specs):
            continue
        source = low if lower else text
        if hint in source:
            spots = [at for at, _ in _positions(source, (hint,))]
            for i in specs:
                out.setdefault(i, []).extend(spots)
    for i, pre in _LOCATED:
        if only is not None and i not in only:
            continue
        spots = [m.start() for m in pre.finditer(text)]
        if spots:
            out[i] = spots
    for spots in out.values():
        spots.sort()
    return out


def _windows(text: str, anchors: Sequence[int]) -> Iterator[tuple[int, int]]:
    """The lines holding ``anchors`` (at most WINDOW characters either side), merged."""
    lo = hi = -1
    for at in anchors:
        if at < hi:
            continue
        if hi >= 0:
            yield lo, hi
        lo = max(text.rfind("\n", 0, at) + 1, at - WINDOW)
        eol = text.find("\n", at)
        hi = min(len(text) if eol < 0 else eol, at + WINDOW)
    if hi >= 0:
        yield lo, hi


def _providers(text: str, anchors: Mapping[int, list[int]]) -> list[Finding]:
    return [f for f, _ in _matches(text, anchors)]


def _matches(
    text: str, anchors: Mapping[int, list[int]], bounded: bool = True
) -> list[tuple[Finding, _Detector]]:
    found = []
    detectors = _detectors()
    for i, spots in anchors.items():
        d = detectors[i]
        for lo, hi in _windows(text, spots):
            for m in d.pattern.finditer(text, lo, hi):
                found += [(f, d) for f in _provider_finding(d, m, text, bounded)]
    return found


# Patterns that read context around the secret (``aws … key … "…"``, ``//host/:_authToken=…``):
# in a copy without whitespace, that context would run on across the words that follow.
_CONTEXTUAL = frozenset(("aws-secret-key", "npm-token"))


def hints(text: str, low: str) -> dict[int, list[int]]:
    """Where the provider formats' hints occur (by spec): none in a copy of a text without its
    whitespace means none in the text either (no hint holds a space)."""
    return _anchors(text, low)


def joined(text: str, anchors: Mapping[int, list[int]]) -> list[tuple[Finding, _Detector]]:
    """Provider formats in a copy of a text without its whitespace (a key split across lines;
    ``anchors``: its :func:`hints`), before the boundary check: the caller checks it in the
    text the copy came from."""
    kept = {
        i: spots
        for i, spots in anchors.items()
        if _SPECS[i].kind not in _CONTEXTUAL or _SPECS[i].regex
    }
    return _matches(text, kept, bounded=False) if kept else []


def _provider_finding(
    d: _Detector, m: re.Match[str], text: str, bounded: bool = True
) -> list[Finding]:
    start, end = m.span(d.spec.group)
    if d.spec.after:
        start = text.find(d.spec.after, start, end) + len(d.spec.after)
    if start < 0 or end <= start:
        return []
    if d.spec.extend:
        while end < len(text) and (text[end].isalnum() or text[end] in "-_=+/."):
            end += 1
        while text[end - 1] == ".":
            end -= 1
    if (
        bounded
        and d.spec.bounded
        and ((start > 0 and text[start - 1].isalnum()) or (end < len(text) and text[end].isalnum()))
    ):
        return []
    value = text[start:end]
    if (d.valid is not None and not d.valid(value)) or _repetitive(value):
        return []  # not a well-formed JWT; ghp_XXXXXXXX… in documentation
    return [Finding(start, end, d.spec.kind)]


# Private key blocks span lines: from BEGIN to the matching END (or the paste's end).
_KEY_HEADERS = ("PRIVATE KEY", "PuTTY-User-Key-File")
_BEGIN = re.compile(r"BEGIN (?P<label>[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?)(?:-----)?")
_PUTTY = re.compile(r"PuTTY-User-Key-File-\d+:")
# What follows a real header: optional "Name: value" lines (PGP, encrypted PEM), then base64.
_KEY_START = re.compile(r"(?:\\n|\s)*(?:[A-Za-z][\w-]*: [^\n]*\n)*(?:\\n|\s)*[A-Za-z0-9+/=]{20}")
_BLOCK_END = re.compile(r"\n[ \t]*\n|\Z")


def _key_blocks(text: str) -> list[Finding]:
    plugin = importlib.import_module("detect_secrets.plugins.private_key").PrivateKeyDetector
    if not any(p.search(text) for p in plugin.denylist) and "ENCRYPTED PRIVATE KEY" not in text:
        return []
    found = []
    for m in _BEGIN.finditer(text):
        begin = m.start() - 5 if text.endswith("-----", 0, m.start()) else m.start()
        end_mark = f"END {m['label']}"
        stop = text.find(end_mark, m.end())
        if stop >= 0:
            end = stop + len(end_mark)
            end += 5 if text.startswith("-----", end) else 0
        else:
            gap = _BLOCK_END.search(text, m.end())
            end = gap.start() if gap else len(text)
        if _KEY_START.match(text, m.end()):
            found.append(Finding(begin, end, "private-key"))
    for m in _PUTTY.finditer(text):
        mac = text.find("Private-MAC:", m.end())
        if mac >= 0:
            eol = text.find("\n", mac)
            end = len(text) if eol < 0 else eol
        else:
            gap = _BLOCK_END.search(text, m.end())
            end = gap.start() if gap else len(text)
        found.append(Finding(m.start(), end, "private-key"))
    return found


# Passwords in URLs: detect-secrets' BasicAuthDetector (user:password@, without sub-delimiters
# in either), and ours, which allows them (RFC 3986 does in userinfo) and an empty user.
_USERINFO = re.compile(r"://[^\s:/?#@\[\]]*:([^\s/?@\[\]]+)@")
# Command lines that take a password: curl -u user:password, redis-cli -a, mysql -pPASSWORD…,
# and .netrc entries (machine … login … password …).
_CLI_PASSWORDS = {
    hint: re.compile(rf"{lead}([^\s'\"]+)")
    for hint, lead in (
        (" -u", r"(?<=\s)-u[ =]?['\"]?[^\s:'\"]+:"),
        ("--user", r"--user[ =]?['\"]?[^\s:'\"]+:"),
        ("redis-cli", r"redis-cli\b[^\n]*?[ \t]-a[ \t]+['\"]?"),
        (
            " login",
            r"(?:sshpass|docker login|podman login|registry login)\b[^\n]*?[ \t]-p[ \t]+['\"]?",
        ),
        ("sshpass", r"sshpass\b[^\n]*?[ \t]-p[ \t]*['\"]?"),
        ("mysql", r"mysql(?:dump|admin)?\b[^\n]*?[ \t]-p(?=[^\s-])"),
        ("machine", r"machine[ \t]+\S+(?:\s+(?:login|account)[ \t]+\S+)*\s+password[ \t]+"),
    )
}


def _passwords(text: str) -> list[Finding]:
    patterns: list[re.Pattern[str]] = []
    if "://" in text and "@" in text:
        plugin = importlib.import_module("detect_secrets.plugins.basic_auth").BasicAuthDetector
        patterns += [*plugin.denylist, _USERINFO]
    patterns += [p for hint, p in _CLI_PASSWORDS.items() if hint in text]
    found = []
    for pattern in patterns:
        for m in pattern.finditer(text):
            end = m.end(1)
            while end > m.start(1) and text[end - 1] in ",.;:)":
                end -= 1
            if not _placeholder(text[m.start(1) : end]):
                found.append(Finding(m.start(1), end, "password", _HEADER))
    return found


# Authorization headers: Bearer / token credentials, Basic user:password in base64.
# Searched in the lowercased text; the value is read from the text itself.
_SCHEMES = ("bearer", "basic", "token")
_CREDENTIAL = re.compile(r"[ \t]+([a-z0-9\-._~+/]+=*)")
_AUTHORIZATION = re.compile(r"authorization[\"']?[ \t]*[:=][ \t]*[\"'`]?[ \t]*$")


def _auth_headers(text: str, low: str) -> list[Finding]:
    found = []
    for at, scheme in _positions(low, _SCHEMES):
        if at > 0 and low[at - 1].isalnum():
            continue
        if scheme == "token" and _AUTHORIZATION.search(low, max(0, at - 40), at) is None:
            continue  # "token 9fceb02d…" in prose is an id; only "Authorization: token …" holds one
        m = _CREDENTIAL.match(low, at + len(scheme))
        if m is None:
            continue
        value = text[m.start(1) : m.end(1)]
        if scheme == "basic":
            if len(value) >= 8 and ":" in _b64(value):
                found.append(Finding(m.start(1), m.end(1), "basic-auth", _HEADER))
        elif _random(value) and not _placeholder(value):
            found.append(Finding(m.start(1), m.end(1), "bearer-token", _HEADER))
    return found


def _b64(value: str) -> str:
    try:
        return base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return ""


# -- assignments: a secret-sounding name, an operator, a value --------------------------------
def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Searched in the lowercased text: a hit is checked further only when an operator follows.
_KEYWORDS = tuple(_words("pass pw secret key token auth cred sig salt cookie contrase"))
_KEYWORD_SET = frozenset(_KEYWORDS)
_TAIL = re.compile(
    r"[\w.\-]*(?P<close>[\"'`]?\]?[\"'`]?)[ \t]*"
    r"(?P<op>:=|=>|={1,3}|!==?|:(?![/\\:])|[ \t](?=\S))"
)
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-$")
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_SEPARATORS = re.compile(r"[^a-z0-9ñ]+")
_WORD_SPLIT = re.compile(r"[-_ ]+")
_PASSWORD_NAME = re.compile(
    r"(?:^|_)(?:[a-z0-9]*pass(?:word|wd|phrase)|pass|pwd|pw|contrase(?:ñ|n)a)(?:_|$)"
)
_GENERIC_NAME = re.compile(
    r"(?:^|_)(?:token|auth|credentials?|creds|sig|signature|salt|cookie|bearer)(?:_|$)|_key$|^key$"
)
_TOKEN_NAME = re.compile(r"(?:^|_)(?:token|bearer)(?:_|$)")
# A name ending in one of these holds something about the secret, not the secret.
_NOT_VALUE = _words(
    "name names id ids arn file files path dir url uri endpoint host hosts ref refs length len"
    " min max size count limit budget timeout policy type types kind format field fields header"
    " headers hint prompt label env var vars enabled enable disabled required mode method methods"
    " rotation ttl expiry expires expiration expired version provider providers store manager"
    " backend source mount index prefix suffix algorithm algo strength reset changed"
    " regex pattern placeholder example template location scope scopes usage cls class"
    " validation validator strategy flow flows issuer audience"
)
_PLACEHOLDER_WORDS = _words(
    "null none nil true false yes no on off undefined empty required optional redacted hidden"
    " masked changeme change_me changeit placeholder example sample dummy test testing todo tbd"
    " n/a na string str bool int integer env secret secrets password passwd pass token key value"
    " your_password your_token your_key your_secret your_api_key xxx default unset"
)
# Words an example value is made of: "secret-key", "my_api_token", "test-password-123".
_FILLER = _PLACEHOLDER_WORDS | _words(
    "my your the a an api access client app demo fake mock dev local some new old foo bar baz"
    " abc here this that auth private public service account db database 123 1234 12345 here"
    " super very s3cr3t"
)
_UNQUOTED = re.compile(r"[^\s\"'`,;()\[\]{}]+")
_UNQUOTED_QUERY = re.compile(r"[^\s\"'`,;()\[\]{}&#]+")
# db_password, DB_PASSWORD, challengePassword, PrivateKeyInfo: another name, not a value.
_NAME_LIKE = re.compile(r"[a-z_]+|[A-Z_]+|[a-z]+(?:[A-Z][a-z]+)+|(?:[A-Z][a-z]+){2,}")
_CAMEL_WORDS = re.compile(r"(?:[A-Z][a-z]+){3,}")  # EllipticCurvePrivateKey: a class
_SNAKE_VARIABLE = re.compile(r"[a-z]+(?:_[a-z]+)+")
_WORDY = re.compile(r"[a-z]+(?:-[a-z]+)*")  # xet-auth, fal-ai-api-key: a label
_STOP_WORDS = _words("the a an be will is are to of your here with for this that")
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_MORE_WORDS = re.compile(r"[ \t]+\S")
_EXPRESSION = re.compile(r"[ \t]+[-+*/%|&]+[ \t]")
_ANNOTATION = re.compile(r"[ \t]*(?:[,)|]|=[^=])")
_TYPE_SUFFIX = re.compile(
    r"[A-Z][A-Za-z]*(?:Str|String|Bytes|Client|Source|Type|Config|Settings|Provider|Model"
    r"|Manager|Service|Handler|Base|Factory|Store|Token|Key|Secret|Credentials?|Info|Data"
    r"|Options|Params|Result|Response|Request|Callable|Protocol|Dict|List)"
)
_TYPE_NAMES = _words(
    "bytes str int float bool dict list tuple set any none optional string number boolean"
    " object array uuid secretstr secretbytes"
)


@functools.lru_cache(maxsize=4_096)
def _classify(name: str) -> str | None:
    """The kind of secret a name holds: password, secret, token or high-entropy (generic
    names, whose values must look random), or None. ``config.password``: its last part."""
    snake = _CAMEL.sub(r"\1_\2", name.strip(".-$@").rsplit(".", 1)[-1]).lower()
    snake = _SEPARATORS.sub("_", snake).strip("_")
    if not snake or snake.rsplit("_", 1)[-1] in _NOT_VALUE:
        return None
    if _PASSWORD_NAME.search(snake):
        return "password"
    if _secret_names().search(snake):
        return "secret"
    if _GENERIC_NAME.search(snake):
        return "token" if _TOKEN_NAME.search(snake) else "high-entropy"
    return None


def _assignments(
    text: str, low: str, spots: Sequence[tuple[int, str]] | None = None
) -> list[Finding]:
    """``spots``: where the keywords occur, if the caller looked (:func:`keyword_spots`)."""
    found: list[Finding] = []
    done = 0  # the end of the last assignment read: a name holds several keywords
    if spots is None:
        spots = _positions(low, _KEYWORDS)
    for at, word in spots:
        if word not in _KEYWORD_SET:
            continue
        if at < done:
            continue
        tail = _TAIL.match(text, at + len(word))
        if tail is None:
            continue
        start = at
        while start > 0 and text[start - 1] in _NAME_CHARS:
            start -= 1
        name_end = tail.start("close")
        op = tail["op"]
        if op[0] in " \t" and not text.startswith("--", start):
            continue  # "name value" only for command-line flags: --password hunter2
        done = tail.end()
        kind = _classify(text[start:name_end])
        if kind is None:
            continue
        span = _value(text, tail.end(), op, start)
        if span is None:
            continue
        v_start, v_end, quoted = span
        value = text[v_start:v_end]
        if _plausible(value, kind, quoted, op, text, v_end):
            found.append(Finding(v_start, v_end, kind, _ASSIGNED))
            done = v_end
    return found


def _value(text: str, at: int, op: str, name_start: int) -> tuple[int, int, bool] | None:
    """The value after an operator: quoted (to its closing quote on the line) or one word."""
    while at < len(text) and text[at] in " \t@":
        at += 1
    if at >= len(text):
        return None
    if op in ("=", ":", ":=") and (
        text[at] in "\r\n" or (op == ":" and _BLOCK_SCALAR.match(text, at))
    ):
        return next_line(text, at)  # DB_PASSWORD=⏎value, password: |⏎  value
    quote = text[at]
    if quote in "\"'`":
        eol = text.find("\n", at)
        eol = len(text) if eol < 0 else eol
        close = text.find(quote, at + 1, eol)
        if close > at + 1:
            return at + 1, close, True
        at += 1  # unterminated: read it as a word
    in_query = name_start > 0 and text[name_start - 1] in "?&"
    m = (_UNQUOTED_QUERY if in_query else _UNQUOTED).match(text, at)
    if m is None:
        return None
    end = m.end()
    if not text.endswith("..", at, end):  # sk_test_... is an example
        while end > at and text[end - 1] in ".:":
            end -= 1  # the end of a sentence
    return (at, end, False) if end > at else None


_BLOCK_SCALAR = re.compile(r"[|>][-+]?[ \t]*(?:\r?\n|$)")


def next_line(text: str, at: int) -> tuple[int, int, bool] | None:
    """The value on the line after ``at`` (the end of a line): the whole line when it is one
    word, unquoted (not a YAML key, a comment or a sentence)."""
    eol = text.find("\n", at)
    if eol < 0:
        return None
    start = eol + 1
    while start < len(text) and text[start] in " \t":
        start += 1
    end = text.find("\n", start)
    end = len(text) if end < 0 else end
    while end > start and text[end - 1] in " \t\r":
        end -= 1
    word = text[start:end]
    if not word or any(c.isspace() for c in word) or word.endswith(":") or word[0] == "#":
        return None
    if len(word) > 2 and word[0] == word[-1] and word[0] in "\"'`":
        return start + 1, end - 1, True
    return start, end, False


def _plausible(value: str, kind: str, quoted: bool, op: str, text: str, end: int) -> bool:
    """Whether an assigned value looks like a secret rather than a placeholder, a reference
    or prose."""
    if _placeholder(value):
        return False
    if _NAME_LIKE.fullmatch(value) and _classify(value) is not None:
        return False  # another name: password = db_password, auth = "client_secret_basic"
    if _CAMEL_WORDS.fullmatch(value):
        return False
    if " " in value and _STOP_WORDS & set(value.lower().split()):
        return False  # a sentence in quotes: 'secret': 'will be replaced'
    if not quoted:
        after = text[end : end + 1]
        if after in "([" and after:
            return False  # a call or an index: get_secret("…"), os.environ["…"]
        if _DOTTED.fullmatch(value) or "=" in value.rstrip("="):
            return False  # another name (password = settings.db_password) or a KEY=value
        if value.isalpha() and (op[0] in " \t" or (op != "=" and _MORE_WORDS.match(text, end))):
            return False  # prose: "Password: use the one in the vault", "--password instead"
        if op == ":" and (_ANNOTATION.match(text, end) or _type_name(value)):
            return False  # a type annotation: password: bytes, api_key: SecretStr = None
        if _EXPRESSION.match(text, end) or (
            op == "="
            and text[end - len(value) - 2 : end - len(value)] == "= "
            and _SNAKE_VARIABLE.fullmatch(value)
        ):
            return False  # code: key = opt_api + "…", password = user_password
    if value.startswith(("/", "./", "../", "~/", "http://", "https://")) and "@" not in value:
        return False  # a path or a URL names where the secret is
    if kind == "password":
        return len(value) >= 4
    if kind == "secret":
        return len(value) >= 8 and not value.isdigit() and not _WORDY.fullmatch(value)
    return _random(value)


def _type_name(value: str) -> bool:
    return value.lower() in _TYPE_NAMES or bool(_TYPE_SUFFIX.fullmatch(value))


def _placeholder(value: str) -> bool:
    v = value.strip()
    heuristic = _heuristics()
    low = v.lower().strip("<>[]{}()*_-")
    return (
        len(v) < 3
        or heuristic.is_templated_secret(v)
        or heuristic.is_not_alphanumeric_string(v)
        or v.startswith(("$", "%", "{{", "<", "[REDACTED", "!", "&", "*"))
        or low in _PLACEHOLDER_WORDS
        or low.startswith(("your", "my_", "my-", "insert", "enter", "replace", "put_"))
        or "..." in v
        or "…" in v
        or (v.startswith("__") and v.endswith("__"))
        or all(p in _FILLER for p in _WORD_SPLIT.split(low))
        or (v.isalpha() and any(w in low for w in ("secret", "password", "token")))
        or "example" in low
        or _repetitive(v)
    )


def _repetitive(value: str) -> bool:
    """xxxx, ****, ghp_XXXXXXXX…: one character makes up most of it."""
    if len(value) < 6:
        return len(set(value)) == 1
    return Counter(value).most_common(1)[0][1] * 2 > len(value)


def _random(value: str) -> bool:
    """A value under a generic name (token, *_key, signature…) counts when it looks random:
    16+ characters of two kinds at least, with the entropy of a random string that long."""
    if len(value) < 16 or " " in value:
        return False
    if len(value) < 32 and not any(c.isdigit() for c in value):
        return False  # PypiTokenDetector, ReadOnlyAccessPolicy: words, not a random string
    kinds = sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
        )
    )
    if kinds < 2:
        return False
    heuristic = _heuristics()
    if heuristic.is_potential_uuid(value) or heuristic.is_sequential_string(value):
        return False
    b64, hexa = _entropy()
    if all(c in "0123456789abcdefABCDEF" for c in value):
        return hexa(value) >= 3.0
    # A random base64 string of n characters has an entropy near log2(n) (for n ≪ 64).
    return b64(value) >= min(4.0, 0.8 * math.log2(len(value)))


def lowered(text: str) -> str:
    """``text`` lowercased, its offsets kept (a few characters lowercase to two)."""
    low = text.lower()
    if len(low) != len(text):
        low = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    return low


def positions(low: str, words: Sequence[str]) -> list[tuple[int, str]]:
    """Where each of ``words`` occurs in ``low``, in order: one search serves the
    assignments (:data:`_KEYWORDS`) and the statements in prose."""
    return _positions(low, words)


def detect(
    text: str,
    low: str,
    providers: Container[int] | None = None,
    spots: Sequence[tuple[int, str]] | None = None,
) -> list[Finding]:
    """Every detector's findings in ``text`` (``low``: :func:`lowered`), overlaps and all;
    of the provider formats, only ``providers`` (by spec) when the caller knows the others'
    hints do not occur (``spots``: :func:`positions` of words holding the keywords)."""
    found: list[Finding] = []
    anchors = _anchors(text, low, providers) if providers != () else {}
    if anchors:
        found += _providers(text, anchors)
    if any(h in text for h in _KEY_HEADERS):
        found += _key_blocks(text)
    found += _passwords(text)
    found += _auth_headers(text, low)
    found += _assignments(text, low, spots)
    return found
