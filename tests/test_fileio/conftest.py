"""Fixtures for the fileio tests: a real HTTP server on 127.0.0.1 and a clean FileClient cache."""

import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

from mmpar.fileio import FileClient


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the stdlib's parameter name
        pass


@pytest.fixture
def http_root(tmp_path):
    """Serve ``tmp_path/www`` over HTTP; yields ``(folder, base_url)``."""
    root = tmp_path / "www"
    root.mkdir()
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield root, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture(autouse=True)
def _restore_file_client_registry():
    """Undo backends/prefixes registered and clients cached by a test."""
    saved = (
        dict(FileClient._backends),
        dict(FileClient._prefix_to_backends),
        dict(FileClient._instances),
    )
    yield
    for table, old in zip(
        (FileClient._backends, FileClient._prefix_to_backends, FileClient._instances), saved
    ):
        table.clear()
        table.update(old)
