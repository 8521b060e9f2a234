"""One settings object, read from BIGMIND_* environment variables at the entry points."""

from __future__ import annotations

import getpass
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_DB_PATH = Path("~/.mcp/bigmind/memory.db")


def _login_name() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no passwd entry (containers) and no LOGNAME/USER
        return "me"


class Settings(BaseSettings):
    """BigMind configuration. Every field maps to BIGMIND_<NAME>."""

    model_config = SettingsConfigDict(env_prefix="BIGMIND_", extra="ignore")

    db_path: Path = Field(default=DEFAULT_DB_PATH, description="SQLite database file.")
    db_url: str | None = Field(default=None, description="PostgreSQL DSN (enterprise mode).")
    mode: Literal["personal", "team", "enterprise"] = "personal"
    user: str = Field(default_factory=_login_name, description="Whose memory this server serves.")
    port: int = Field(default=7700, ge=1, le=65535)
    autoopen: bool = False
    log_level: str = "WARNING"
    busy_timeout_ms: int = Field(default=10_000, ge=0)
    context_budget: int = Field(default=1300, ge=200, le=20_000)
    embed_model: str = Field(
        default="all-MiniLM-L6-v2",
        description="Embedding model: a name under <data dir>/models, a directory, or 'off'.",
    )
    embed_threads: int = Field(default=1, ge=0, le=64, description="ONNX Runtime threads (0: all).")

    @field_validator("db_path")
    @classmethod
    def _expand(cls, v: Path) -> Path:
        return v.expanduser()

    @field_validator("user")
    @classmethod
    def _user_not_blank(cls, v: str) -> str:
        v = v.strip()
        if not v:
            raise ValueError("BIGMIND_USER must not be blank")
        return v

    @property
    def data_dir(self) -> Path:
        """Folder beside the database for exports and logs."""
        return self.db_path.parent

    @property
    def models_dir(self) -> Path:
        """Where `bigmind model export` puts models and named models are looked up."""
        return self.data_dir / "models"
