"""Who a gateway request comes from: a BigMind token, an OIDC/JWT bearer token, or a page login.

The user is whoever the credential says — never a header, argument or setting the client
sends. BigMind tokens (``bm_…``) are checked against their SHA-256 in ``api_tokens``; with
``BIGMIND_OIDC_JWKS_URL`` set, any other bearer token is verified as a JWT by FastMCP's
``JWTVerifier`` (signature from the issuer's JWKS, expiry, ``iss`` and ``aud``), and the
``BIGMIND_OIDC_USER_CLAIM`` claim names the user. Requests are rate-limited per credential
(a token bucket), failed attempts per client address. A page login (:class:`Logins`) lasts
while its token does (checked at every request), 12 hours unused at most, and
``BIGMIND_LOGIN_MAX_HOURS`` (or a JWT's ``exp``) in all.
"""

from __future__ import annotations

import hashlib
import logging
import math
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

import anyio.to_thread

from bigmind import limits
from bigmind.config import Settings
from bigmind.errors import InvalidInput
from bigmind.runtime import Runtime
from bigmind.service import accounts

log = logging.getLogger(__name__)
FAILURES_PER_MINUTE = 30  # bad credentials from one address before it is slowed down
LOGIN_IDLE_HOURS = 12  # a page login lasts this long after its last use
LOGINS_MAX = 10_000  # page logins kept (the oldest is dropped)
BUCKETS_MAX = 100_000  # rate-limit buckets kept


@dataclass(frozen=True, slots=True)
class Identity:
    """An authenticated caller: the user, and the credential's key for rate limits."""

    username: str
    principal: str  # "token:<id>", "jwt:<iss>|<sub>" or "login:<id>"
    token_id: str | None = None
    expires: float | None = None  # a JWT's ``exp`` (seconds since the epoch)


class Refused(Exception):
    """No identity: why, for the 401's ``error_description`` (never the credential)."""

    def __init__(self, reason: str, *, invalid: bool = True) -> None:
        super().__init__(reason)
        self.reason = reason
        self.invalid = invalid  # False: no credential was sent at all


class Verifier:
    """Checks bearer credentials against the database and, if configured, an OIDC issuer."""

    def __init__(self, settings: Settings, rt: Runtime) -> None:
        self.rt = rt
        self.claim = settings.oidc_user_claim
        self.jwt = _jwt_verifier(settings)

    async def bearer(self, credential: str) -> Identity:
        if credential.startswith(accounts.TOKEN_PREFIX):
            found = await anyio.to_thread.run_sync(self._token, credential)
            if found is None:
                raise Refused("the token is unknown, revoked or expired")
            return found
        if self.jwt is None:
            raise Refused("not a BigMind token (and no OIDC issuer is configured)")
        access = await self.jwt.verify_token(credential)
        if access is None:
            raise Refused("the JWT failed verification (signature, expiry, issuer or audience)")
        claims = access.claims or {}
        name = claims.get(self.claim)
        if not isinstance(name, str):
            raise Refused(f"the JWT has no {self.claim!r} claim naming the user")
        try:
            user = limits.check_text("username", name, limits.NAME)
        except InvalidInput as exc:
            raise Refused(f"the JWT's {self.claim!r} claim is not a usable user name") from exc
        subject = f"{claims.get('iss', '')}|{claims.get('sub', user)}"
        expires = float(access.expires_at) if access.expires_at is not None else None
        return Identity(user, f"jwt:{subject}", expires=expires)

    async def holds(self, who: Identity) -> bool:
        """Whether the BigMind token ``who`` came from is still live and its user still
        there (one read by the token's id); a JWT's identity holds until its ``exp``."""
        if who.token_id is None:
            return who.expires is None or who.expires > time.time()
        return await anyio.to_thread.run_sync(self._holds, who.token_id, who.username)

    def _token(self, secret: str) -> Identity | None:
        found = accounts.authenticate(self.rt, secret)
        if found is None:
            return None
        return Identity(found.username, f"token:{found.token_id}", found.token_id)

    def _holds(self, token_id: str, username: str) -> bool:
        return accounts.holds(self.rt, token_id, username)


def _jwt_verifier(settings: Settings):  # type: ignore[no-untyped-def]
    if not settings.oidc_jwks_url:
        return None
    from fastmcp.server.auth.providers.jwt import JWTVerifier

    return JWTVerifier(
        jwks_uri=settings.oidc_jwks_url,
        issuer=settings.oidc_issuer,
        audience=settings.oidc_audience,
        algorithm=settings.oidc_algorithm,
    )


class RateLimiter:
    """A token bucket per key: ``per_minute`` requests a minute, bursts of a tenth of that
    (at least 10). ``per_minute`` 0 lets everything through."""

    def __init__(self, per_minute: int) -> None:
        self.rate = per_minute / 60.0
        self.burst = max(10.0, per_minute / 10.0)
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, key: str) -> float:
        """0 when a request under ``key`` may go now, else the seconds until one may."""
        if self.rate <= 0:
            return 0.0
        now = time.monotonic()
        with self._lock:
            level, then = self._buckets.pop(key, (self.burst, now))
            level = min(self.burst, level + (now - then) * self.rate)
            wait = 0.0 if level >= 1 else (1 - level) / self.rate
            self._buckets[key] = (level - 1 if wait == 0 else level, now)
            while len(self._buckets) > BUCKETS_MAX:
                self._buckets.popitem(last=False)
        return wait


@dataclass(slots=True)
class Login:
    """A page login: the user, its CSRF token, and when it lapses (unused, and in all)."""

    identity: Identity
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    until: float = 0.0  # ``clock()`` time: ends unless used before
    ends: float = 0.0  # ``clock()`` time: ends, used or not


class Logins:
    """Page logins by cookie value (a random 256-bit id; only its digest is kept). Each ends
    ``idle_hours`` after its last use, ``max_hours`` after it was made, and at its JWT's
    ``exp``; ``clock`` gives seconds since the epoch."""

    def __init__(
        self,
        max_hours: float = 24,
        idle_hours: float = LOGIN_IDLE_HOURS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.max_s = max_hours * 3600
        self.idle_s = idle_hours * 3600
        self.clock = clock
        self._by_id: OrderedDict[str, Login] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def _key(cookie: str) -> str:
        return hashlib.sha256(cookie.encode()).hexdigest()

    def open(self, who: Identity) -> tuple[str, int]:
        """A new login for ``who``: its cookie value, and the seconds it may last."""
        cookie = secrets.token_urlsafe(32)
        key = self._key(cookie)
        now = self.clock()
        login = Login(Identity(who.username, f"login:{key[:16]}", who.token_id, who.expires))
        login.ends = min(now + self.max_s, who.expires if who.expires is not None else math.inf)
        login.until = min(now + self.idle_s, login.ends)
        with self._lock:
            self._by_id[key] = login
            while len(self._by_id) > LOGINS_MAX:
                self._by_id.popitem(last=False)
        return cookie, max(0, int(login.ends - now))

    def get(self, cookie: str) -> Login | None:
        key = self._key(cookie)
        now = self.clock()
        with self._lock:
            login = self._by_id.get(key)
            if login is None:
                return None
            if login.until <= now or login.ends <= now:
                del self._by_id[key]
                return None
            login.until = min(now + self.idle_s, login.ends)
            self._by_id.move_to_end(key)
            return login

    def close(self, cookie: str) -> None:
        with self._lock:
            self._by_id.pop(self._key(cookie), None)
