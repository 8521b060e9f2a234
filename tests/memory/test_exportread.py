"""Export files read one row at a time: the same values json.loads gives, at any piece size."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bigmind.errors import InvalidInput
from bigmind.memory import exportread, transfer
from bigmind.storage.store import Store

DOC: dict[str, Any] = {
    "format": "bigmind-export",
    "version": 1,
    "user": {"username": "ann", "id": "u1"},
    "empty": [],
    "facts": [
        {"id": 123456789, "fact": 'a "quoted" text, é and 🧠', "confidence": 0.125},
        {"id": 2, "fact": "line\nbreak", "deprecated": True, "x": None, "n": -1.5e3},
    ],
    "nested": {"a": [1, {"b": [2, 3]}]},
    "last": 42,
}


def _read(path: Path) -> dict[str, Any]:
    """The document rebuilt from its entries."""
    out: dict[str, Any] = {}
    for key, i, value in exportread.entries(path):
        if i is None:
            out[key] = value
        else:
            out.setdefault(key, [])
            if i >= 0:
                out[key].append(value)
    return out


@pytest.mark.parametrize("piece", [1, 2, 3, 7, 64, 1 << 20])
@pytest.mark.parametrize("indent", [None, 1])
def test_entries_give_what_json_loads_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, piece: int, indent: int | None
) -> None:
    monkeypatch.setattr(exportread, "PIECE", piece)
    path = tmp_path / "doc.json"
    text = json.dumps(DOC, ensure_ascii=False, indent=indent)
    path.write_text(text, encoding="utf-8")
    assert _read(path) == json.loads(text)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": [1, 2',  # cut off
        '{"a": [1 2]}',  # no comma
        '{"a": 1} x',  # extra data
        '{"a" 1}',  # no colon
        '{"a": [1,]}',
        "{1: 2}",
    ],
)
def test_broken_files_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    monkeypatch.setattr(exportread, "PIECE", 3)
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(json.JSONDecodeError):
        _read(path)
    with pytest.raises(InvalidInput, match="not valid JSON"):
        transfer.load_export(path)


@pytest.mark.parametrize("text", ["[1, 2]", "", '"text"'])
def test_a_file_without_an_object_is_not_an_export(tmp_path: Path, text: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InvalidInput, match="not a BigMind export"):
        transfer.load_export(path)


def test_a_file_with_its_tables_out_of_order_still_imports(store: Store, tmp_path: Path) -> None:
    sid = "3c1f0a9e-2b7d-4e5f-8a6b-9c0d1e2f3a4b"
    data = {
        "format": "bigmind-export",
        "version": 1,
        "user": {"username": "ann"},
        "conversation_chunks": [{"session_id": sid, "role": "user", "content": "hi", "seq": 1}],
        "sessions": [{"id": sid, "started_at": "2025-01-31 12:00:00", "one_liner": "x"}],
    }
    path = tmp_path / "reordered.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    export = transfer.load_export(path)
    assert not export.in_order
    report = transfer.import_data(store, export)
    assert report.added["sessions"] == report.added["conversation_chunks"] == 1


def test_a_table_named_twice_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "twice.json"
    path.write_text(
        '{"format": "bigmind-export", "version": 1, "user": {"username": "a"},'
        ' "facts": [], "people": [], "facts": []}',
        encoding="utf-8",
    )
    with pytest.raises(InvalidInput, match="'facts' appears twice"):
        transfer.load_export(path)
