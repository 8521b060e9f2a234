"""One settings object, read from BIGMIND_* environment variables at the entry points."""

from __future__ import annotations

import getpass
import os
import sys
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_DB_PATH = Path("~/.mcp/bigmind/memory.db")
DEFAULT_EMBED_MODEL = "all-MiniLM-L6-v2"
# The sentence-transformers repository on the Hugging Face hub publishes a ready ONNX export
# (onnx/model.onnx) beside tokenizer.json and the configs: `bigmind model fetch` reads them here.
DEFAULT_MODEL_URL = "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2/resolve/main/"


def _login_name() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no passwd entry (containers) and no LOGNAME/USER
        return "me"


def _hub_offline() -> bool:
    """HF_HUB_OFFLINE=1, the hub's own switch, also keeps BigMind from downloading by itself."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


class Settings(BaseSettings):
    """BigMind configuration. Every field maps to BIGMIND_<NAME>."""

    model_config = SettingsConfigDict(env_prefix="BIGMIND_", extra="ignore")

    db_path: Path = Field(default=DEFAULT_DB_PATH, description="SQLite database file.")
    db_url: str | None = Field(default=None, description="PostgreSQL DSN (enterprise mode).")
    db_owner_url: str | None = Field(
        default=None,
        description="PostgreSQL DSN of the role that owns the tables: migrations and the "
        "cross-user work (embedder, usage counts, `bigmind token`) use it, requests use "
        "BIGMIND_DB_URL, then a runtime role (docs/privacy-postgres.md).",
    )
    allow_unsafe_db_role: bool = Field(
        default=False,
        description="Serve even though BIGMIND_DB_URL's role is a superuser or has BYPASSRLS "
        "(row-level security off for it; warned at start and by `bigmind doctor`).",
    )
    mode: Literal["personal", "team", "enterprise"] = "personal"
    user: str = Field(default_factory=_login_name, description="Whose memory this server serves.")
    port: int = Field(default=7700, ge=1, le=65535, description="Profile page port.")
    web: bool = Field(default=True, description="`bigmind serve` also serves the profile page.")
    web_host: str = Field(
        default="127.0.0.1", description="Profile page address; other hosts reach it if changed."
    )
    http_host: str = Field(
        default="127.0.0.1",
        description="`bigmind serve --http`: the gateway's address (0.0.0.0: every interface).",
    )
    http_port: int = Field(default=8700, ge=1, le=65535, description="The gateway's port.")
    rate_limit: int = Field(
        default=600,
        ge=0,
        le=1_000_000,
        description="Gateway requests per minute per token, in bursts of up to a tenth (0: off).",
    )
    header_timeout_s: float = Field(
        default=10.0,
        ge=0,
        description="Seconds in which an HTTP request's head must arrive, from the connection's "
        "opening or the previous response's end; later: 408, closed (gateway and profile page; "
        "0: no deadline).",
    )
    body_timeout_s: float = Field(
        default=30.0,
        ge=0,
        description="Seconds in which an HTTP request's body must arrive after its head; later: "
        "408, closed (0: no deadline).",
    )
    connections_per_address: int = Field(
        default=20,
        ge=0,
        description="Open HTTP connections one client address may hold; more are answered 503 "
        "and closed at once (0: no bound; behind a reverse proxy every client has its address).",
    )
    oidc_jwks_url: str | None = Field(
        default=None,
        description="The gateway also accepts OIDC/JWT bearer tokens signed by this JWKS' keys.",
    )
    oidc_issuer: str | None = Field(default=None, description="The JWTs' required `iss`.")
    oidc_audience: str | None = Field(default=None, description="The JWTs' required `aud`.")
    oidc_user_claim: str = Field(
        default="preferred_username", description="The JWT claim naming the BigMind user."
    )
    oidc_algorithm: str = Field(default="RS256", description="The JWTs' signing algorithm.")
    login_max_hours: int = Field(
        default=24,
        ge=1,
        le=24 * 365,
        description="A gateway page login ends this many hours after it was made, however "
        "much it is used (and after 12 hours unused; a JWT's login at its `exp`).",
    )
    allowed_origins: str = Field(
        default="",
        description="Comma-separated origins (scheme://host[:port]) whose browser pages may "
        "call the gateway's /mcp and /login, besides the gateway's own.",
    )
    autoopen: bool = Field(default=False, description="Open the profile page in a browser.")
    log_level: str = "WARNING"
    log_format: Literal["text", "json"] = Field(
        default="text",
        description="Log lines on stderr: 'text', or 'json' (one object per line, for a log "
        "pipeline).",
    )
    busy_timeout_ms: int = Field(default=10_000, ge=0)
    max_request_bytes: int = Field(
        default=4 * 1024 * 1024,
        ge=64 * 1024,
        description="The longest message a client may send; longer ones are refused unread.",
    )
    context_budget: int = Field(default=1300, ge=200, le=20_000)
    tools: Literal["full", "compact"] = Field(
        default="full",
        description="Tool profile: 'full' (every tool) or 'compact' (8 tools, ~1,300 tokens).",
    )
    embed_model: str = Field(
        default=DEFAULT_EMBED_MODEL,
        description="Embedding model: a name in the model cache (BIGMIND_HOME/models), a "
        "directory, or 'off'.",
    )
    home: Path | None = Field(
        default=None,
        description="BigMind's per-user folder, independent of the database: the embedding "
        "models live in <home>/models (default: ~/.cache/bigmind; %LOCALAPPDATA%\\bigmind on "
        "Windows).",
    )
    model_url: str = Field(
        default=DEFAULT_MODEL_URL,
        description="Where `bigmind model fetch` and the server's first start download the "
        "model: the hub repository's file URL, or a mirror laid out the same way.",
    )
    offline: bool = Field(
        default_factory=_hub_offline,
        description="Never download the embedding model by itself (default: HF_HUB_OFFLINE).",
    )
    embed_threads: int = Field(default=1, ge=0, le=64, description="ONNX Runtime threads (0: all).")
    ann_min_vectors: int = Field(
        default=20_000,
        ge=0,
        description="Vector partitions of at least this many vectors get an approximate index"
        " saved beside the database and memory-mapped at start (0: off; docs/semantic-search.md).",
    )
    embed_precision: Literal["int8", "float"] = Field(
        default="int8",
        description="Which of the model's two ONNX files runs: 'int8' (quantised: about twice "
        "as fast, a quarter of the weights) or 'float' (the original). They make slightly "
        "different vectors, so a change waits for `bigmind reindex`.",
    )
    session_gap_minutes: int = Field(
        default=30,  # models.SESSION_GAP_MINUTES (the store's default)
        ge=0,
        le=60 * 24 * 365,
        description="Minutes of silence after which a write closes a session opened by a write "
        "(not by memory_start_session) and opens a new one (0: never split).",
    )
    pool_size: int = Field(
        default=4, ge=1, le=64, description="PostgreSQL connections per process."
    )
    project: str | None = Field(
        default=None,
        description="The project (a folder or a name) when the client sends no roots and the "
        "working directory is in no git repository.",
    )
    mirror: bool = Field(
        default=False,
        description="memory_end_session also writes the project's Markdown mirror (as "
        "`bigmind mirror`), unless edits there wait for `bigmind mirror --pull`.",
    )

    @field_validator("db_path")
    @classmethod
    def _expand(cls, v: Path) -> Path:
        return v.expanduser()

    @field_validator("home", mode="before")
    @classmethod
    def _expand_home(cls, v: object) -> object:
        if isinstance(v, str | Path) and not str(v).strip():
            return None  # BIGMIND_HOME= (empty) means the default
        return Path(v).expanduser() if isinstance(v, str | Path) else v

    @field_validator("user")
    @classmethod
    def _user_not_blank(cls, v: str) -> str:
        v = v.strip()
        if not v:
            raise ValueError("BIGMIND_USER must not be blank")
        return v

    @field_validator("db_url", "db_owner_url")
    @classmethod
    def _dsn(cls, v: str | None) -> str | None:
        v = (v or "").strip() or None
        if v is not None and not v.startswith(("postgresql://", "postgres://")):
            raise ValueError("must be a PostgreSQL URL: postgresql://user:password@host:5432/db")
        return v

    @field_validator("oidc_jwks_url", "oidc_issuer", "oidc_audience", mode="before")
    @classmethod
    def _blank_is_none(cls, v: object) -> object:
        return None if isinstance(v, str) and not v.strip() else v

    @field_validator("allowed_origins")
    @classmethod
    def _origins(cls, v: str) -> str:
        for item in _items(v):
            parts = urlsplit(item)
            if (
                parts.scheme not in ("http", "https")
                or not parts.hostname
                or parts.path not in ("", "/")
                or parts.query
                or parts.fragment
                or parts.username is not None
            ):
                raise ValueError(
                    f"{item!r} is not an origin: write scheme://host[:port], e.g. "
                    "https://bigmind.example.com"
                )
            _ = parts.port  # a port that is not a number raises ValueError here
        return ",".join(_items(v))

    @model_validator(mode="after")
    def _enterprise_has_database(self) -> Settings:
        # The mode decides who approves what; BIGMIND_DB_URL decides the database. Nothing
        # falls back silently: enterprise without a PostgreSQL URL is an error, not SQLite.
        if self.mode == "enterprise" and not self.db_url:
            raise ValueError(
                "BIGMIND_MODE=enterprise needs BIGMIND_DB_URL (postgresql://…); "
                "personal and team modes use the SQLite file at BIGMIND_DB_PATH"
            )
        if self.db_owner_url and not self.db_url:
            raise ValueError("BIGMIND_DB_OWNER_URL needs BIGMIND_DB_URL (the runtime role's DSN)")
        return self

    @property
    def database(self) -> str:
        """Where the memory lives, for messages: the SQLite file or the DSN without password."""
        if self.db_url:
            return redact(self.db_url)
        return str(self.db_path)

    @property
    def origins(self) -> list[str]:
        """BIGMIND_ALLOWED_ORIGINS as a list."""
        return _items(self.allowed_origins)

    @property
    def data_dir(self) -> Path:
        """Folder beside the database for exports and logs."""
        return self.db_path.parent

    @property
    def models_dir(self) -> Path:
        """The per-user model cache: where `bigmind model fetch` and `export` put models and
        named models are looked up first, whatever the database's path."""
        return self.home_dir / "models"

    @property
    def home_dir(self) -> Path:
        """BIGMIND_HOME, else the platform's per-user cache folder for BigMind."""
        if self.home is not None:
            return self.home
        if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
            return Path(os.environ["LOCALAPPDATA"]) / "bigmind"
        xdg = Path(os.environ.get("XDG_CACHE_HOME", "").strip() or "relative")
        return (xdg if xdg.is_absolute() else Path.home() / ".cache") / "bigmind"

    @property
    def legacy_models_dir(self) -> Path:
        """Where versions before the model cache exported models: beside the database
        (still searched, after the cache)."""
        return self.data_dir / "models"


def _items(value: str) -> list[str]:
    return [item.strip().rstrip("/") for item in value.split(",") if item.strip()]


def redact(url: str) -> str:
    """The DSN without its password, for messages and logs."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable DSN>"
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))
