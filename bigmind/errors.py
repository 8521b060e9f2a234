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


class DownloadError(BigMindError):
    """The embedding model could not be downloaded, or what was downloaded was refused (not
    the expected model, corrupt); nothing was installed."""

    exit_code = 8
