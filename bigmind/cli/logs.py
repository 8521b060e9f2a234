"""Log lines on stderr: text for people, or one JSON object per line for a log pipeline.

``BIGMIND_LOG_FORMAT=json`` gives each record as ``{"ts", "level", "logger", "message", …}``
with ``ts`` in ISO 8601 UTC, the fields a record carries besides the standard ones (``user``,
``method``, ``path``, ``status``, ``duration_ms``, ``tool``… as the gateway's access log sets
them) and an exception's traceback as one ``exc`` string. In both formats every line passes
:func:`bigmind.redact.redact` (cheap when a line has none of its hints), and a field whose name
says it holds a credential (``authorization``, ``token``, ``cookie``, ``password``…) is
dropped whatever its value: secrets never reach the logs.
"""

from __future__ import annotations

import json
import logging
import re
from datetime import UTC, datetime
from typing import Any

# What every LogRecord has: anything else on a record was put there with ``extra=``.
STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {
    "message",
    "asctime",
    "taskName",
}
_CREDENTIAL = re.compile(r"authorization|token|cookie|password|secret|credential|api_?key|header")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def clean(text: str) -> str:
    """``text`` with any secret in it replaced by ``[REDACTED:<kind>]``."""
    from bigmind.redact import redact  # on the first line logged: most commands log none

    return redact(text).text


class TextFormatter(logging.Formatter):
    """The classic one-line text format, redacted."""

    def __init__(self) -> None:
        super().__init__(TEXT_FORMAT)

    def format(self, record: logging.LogRecord) -> str:
        return clean(super().format(record))


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line."""

    def format(self, record: logging.LogRecord) -> str:
        ts = datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")
        out: dict[str, Any] = {
            "ts": ts.replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": clean(record.getMessage()),
        }
        for key, value in vars(record).items():
            if key in STANDARD or key.startswith("_") or key in out:
                continue
            if _CREDENTIAL.search(key.lower()):
                continue  # never a credential, even one a caller passed by mistake
            out[key] = _field(value)
        if record.exc_info:
            out["exc"] = clean(self.formatException(record.exc_info))
        if record.stack_info:
            out["stack"] = clean(self.formatStack(record.stack_info))
        return json.dumps(out, ensure_ascii=False)


def _field(value: object) -> object:
    if value is None or isinstance(value, bool | int | float):
        return value
    return clean(str(value))


def formatter(fmt: str) -> logging.Formatter:
    """The formatter of ``BIGMIND_LOG_FORMAT`` (``text`` or ``json``)."""
    return JsonFormatter() if fmt == "json" else TextFormatter()
