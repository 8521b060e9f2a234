"""The exception tree. Tools turn these into ToolErrors; the CLI into one line and an exit code."""


class BigMindError(Exception):
    """Base of every error BigMind raises on purpose. The message says what to do next."""

    exit_code = 1


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


class ExportError(BigMindError):
    """An export could not be written (file exists, directory missing, disk error)."""

    exit_code = 6


class MigrationIncomplete(BigMindError):
    """``bigmind migrate-db``: rows of the source are not in the target after the copy; a
    second run resumes."""

    exit_code = 7
