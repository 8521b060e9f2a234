"""The exception tree. Tools turn these into ToolErrors; the CLI into one line and an exit code;
the profile page into an error page.

A message says what is wrong, in words every surface can show. Where the fix is spelled
differently on each surface (an argument for the agent, an option on the command line, a page
on the web, an endpoint of the REST API), it goes in a hint for that surface: ``NotFound("No fact #4 in your memory.",
tool="Use memory_search_facts to find fact ids.", web="The Facts page lists yours.")``. Each
surface shows :meth:`BigMindError.message_for` itself; ``str(exc)`` is the neutral message.

The tree, with each error's exit code on the command line (``tests/mcp/test_error_wording.py``)::

    BigMindError (1)
    ├── InvalidInput (2)          an argument out of range, malformed or too long
    ├── NotFound (3)              an id naming nothing this user owns
    ├── NoMemoryYet (0)           no memory where the settings point (nothing to read or tidy)
    ├── Forbidden (4)             another user's data, or a role the user lacks
    ├── BackendUnavailable (5)    the database cannot be opened, migrated or reached
    │   └── DatabaseDamaged (8)   the SQLite file is damaged or not a database
    ├── ExportError (6)           an export could not be written
    ├── MigrationIncomplete (7)   `bigmind migrate-db` left rows of the source behind
    └── DownloadError (9)         the embedding model could not be downloaded, or was refused
"""

from typing import Literal

Surface = Literal["tool", "cli", "web", "api"]


class BigMindError(Exception):
    """Base of every error BigMind raises on purpose. The message says what to do next, itself
    or through the hint of the surface showing it."""

    exit_code = 1

    def __init__(
        self,
        message: str = "",
        *,
        tool: str | None = None,
        cli: str | None = None,
        web: str | None = None,
        api: str | None = None,
    ) -> None:
        super().__init__(message)
        said: dict[Surface, str | None] = {"tool": tool, "cli": cli, "web": web, "api": api}
        self.hints: dict[Surface, str] = {k: v for k, v in said.items() if v}

    def message_for(self, surface: Surface) -> str:
        """The message as ``surface`` shows it, on one line (a value it quotes may hold line
        breaks): followed by that surface's hint, if any."""
        hint = self.hints.get(surface)
        return " ".join((f"{self} {hint}" if hint else str(self)).splitlines())


class InvalidInput(BigMindError):
    """An argument is out of range, malformed or too long."""

    exit_code = 2


class NotFound(BigMindError):
    """An id names nothing this user owns."""

    exit_code = 3


class NoMemoryYet(BigMindError):
    """A command that reads or tidies the memory found none where the settings point: it
    creates nothing and says so. Nothing to do is no failure, hence exit code 0 (commands
    asked for one thing, such as ``export`` or ``forget``, use their own codes)."""

    exit_code = 0

    def __init__(self, where: str) -> None:
        self.where = where
        super().__init__(
            f"No memory yet at {where}: start the server (your MCP client runs `bigmind "
            "serve`) or store something first."
        )


class Forbidden(BigMindError):
    """The configured user may not do this (another user's data, or a role it lacks)."""

    exit_code = 4


class BackendUnavailable(BigMindError):
    """The database cannot be opened, migrated or reached; the message names the fix."""

    exit_code = 5


class DatabaseDamaged(BackendUnavailable):
    """The SQLite file is damaged or is not a database: ``bigmind recover`` salvages what
    SQLite can still read into a new file."""

    exit_code = 8


class ExportError(BigMindError):
    """An export could not be written (file exists, directory missing, disk error)."""

    exit_code = 6


class MigrationIncomplete(BigMindError):
    """``bigmind migrate-db``: rows of the source are not in the target after the copy; a
    second run resumes."""

    exit_code = 7


class DownloadError(BigMindError):
    """The embedding model could not be downloaded, or what was downloaded was refused (not
    the expected model, corrupt); nothing was installed."""

    exit_code = 9
