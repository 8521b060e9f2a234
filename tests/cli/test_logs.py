"""Log lines: text or one JSON object per line on stderr (bigmind/cli/logs.py); no secret in
either."""

from __future__ import annotations

import json
import logging
import subprocess
import sys

import pytest

from bigmind.cli.logs import JsonFormatter, TextFormatter
from bigmind.config import Settings

AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"  # AWS's documented example key, split so no scanner trips


def record(msg: str, *args: object, **extra: object) -> logging.LogRecord:
    r = logging.LogRecord("bigmind.http", logging.INFO, __file__, 1, msg, args, None)
    r.__dict__.update(extra)
    return r


def test_a_json_line_has_the_time_level_logger_message_and_the_extra_fields() -> None:
    line = JsonFormatter().format(
        record(
            "%s %s %s",
            "GET",
            "/api/v1/facts",
            200,
            user="alice",
            method="GET",
            path="/api/v1/facts",
            status=200,
            duration_ms=3.5,
            tool=None,
        )
    )
    assert "\n" not in line
    out = json.loads(line)
    assert out["ts"].endswith("Z") and out["ts"][:4].isdigit() and "T" in out["ts"]
    assert (out["level"], out["logger"], out["message"]) == (
        "INFO",
        "bigmind.http",
        "GET /api/v1/facts 200",
    )
    assert out["user"] == "alice" and out["status"] == 200 and out["duration_ms"] == 3.5
    assert out["tool"] is None
    assert not {"args", "msg", "levelno", "pathname", "created"} & set(out)


def test_an_exception_is_one_field_of_one_line() -> None:
    try:
        raise ValueError("bad things")
    except ValueError:
        r = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed", (), sys.exc_info())
    line = JsonFormatter().format(r)
    assert "\n" not in line
    exc = json.loads(line)["exc"]
    assert exc.startswith("Traceback") and "ValueError: bad things" in exc


def test_no_secret_reaches_a_log_line_in_either_format() -> None:
    r = record(
        "connecting with %s and password=%s",
        AWS_KEY,
        "hunter2-Zq9!x",
        authorization="Bearer abcdefghijklmnop",
        token="tok_123",
        detail=f"key {AWS_KEY}",
    )
    for line in (JsonFormatter().format(r), TextFormatter().format(r)):
        assert AWS_KEY not in line and "hunter2" not in line
        assert "abcdefghijklmnop" not in line and "tok_123" not in line
        assert "[REDACTED:aws-access-key]" in line
    out = json.loads(JsonFormatter().format(r))
    assert "authorization" not in out and "token" not in out  # dropped, whatever the value
    assert out["detail"] == "key [REDACTED:aws-access-key]"


def test_log_format_is_a_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().log_format == "text"
    monkeypatch.setenv("BIGMIND_LOG_FORMAT", "json")
    assert Settings().log_format == "json"
    monkeypatch.setenv("BIGMIND_LOG_FORMAT", "xml")
    with pytest.raises(ValueError, match="log_format"):
        Settings()


def test_setup_logging_writes_json_lines_to_stderr_and_nothing_to_stdout() -> None:
    code = (
        "import logging\n"
        "from bigmind.cli.main import setup_logging\n"
        "setup_logging('INFO', 'json')\n"
        "logging.getLogger('bigmind.http').info('GET /x 200', extra={'user': 'bob', 'status': 200})\n"
        "logging.getLogger('bigmind.runtime').debug('not at INFO')\n"
        "logging.getLogger('bigmind.runtime').warning('two\\nlines')\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""
    lines = [json.loads(line) for line in r.stderr.splitlines()]
    assert [(x["logger"], x["message"]) for x in lines] == [
        ("bigmind.http", "GET /x 200"),
        ("bigmind.runtime", "two\nlines"),
    ]
    assert lines[0]["user"] == "bob" and lines[0]["status"] == 200
