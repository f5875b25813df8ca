"""`follow --serve-metrics`: an HTTP `/metrics` page with the engine's own metrics as they stand.

The page is OpenMetrics text (what Prometheus asks for first), the names, types, HELP and labels
of `export openmetrics`, each series' latest value unstamped (the scrape stamps it). It is
rendered when the metrics change (on the reading thread) and served as it is by the server's
threads, so a scrape never waits for the log.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from logparse.errors import OutputError
from logparse.export.openmetrics import render
from logparse.export.series import Series

CONTENT_TYPE = "application/openmetrics-text; version=1.0.0; charset=utf-8"
DEFAULT_HOST = "127.0.0.1"


def parse_address(text: str) -> tuple[str, int]:
    """`HOST:PORT` or `PORT` (bound to 127.0.0.1) as (host, port); `OutputError` when not one."""
    host, _, port = text.rpartition(":")
    host = host.strip("[]") or DEFAULT_HOST
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise OutputError(f"--serve-metrics {text!r}: give PORT or HOST:PORT (e.g. 9464, 0.0.0.0:9464)")
    return host, int(port)


class MetricsServer:
    """`/metrics` served on `host:port` from a thread of its own until `close`."""

    def __init__(self, host: str, port: int) -> None:
        self.page = render([], timestamps=False)  # a complete, empty exposition until lines come
        self.text = "".join(self.page).encode()
        self.source: Callable[[], Iterable[Series]] | None = None
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path.split("?")[0] != "/metrics":
                    self.send_error(404, "only /metrics is served here")
                    return
                body = server.current()
                self.send_response(200)
                self.send_header("Content-Type", CONTENT_TYPE)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                """Scrapes are not logged."""

        try:
            self.httpd = ThreadingHTTPServer((host, port), Handler)
        except OSError as exc:
            raise OutputError(
                f"--serve-metrics {host}:{port}: cannot listen: {exc.strerror or exc}"
            ) from None
        self.httpd.daemon_threads = True
        self.address = f"{host}:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="logparse-metrics", daemon=True)
        self.thread.start()

    def publish(self, series: Iterable[Series]) -> None:
        """Replace the page with these series (one sample each)."""
        self.text = "".join(render(series, timestamps=False)).encode()

    def serve_from(self, source: Callable[[], Iterable[Series]]) -> None:
        """Each scrape asks `source` for the series as they stand (called on the server's thread):
        the metrics are brought up to date when someone reads them, not for every block read."""
        self.source = source

    def current(self) -> bytes:
        """The page a scrape gets now."""
        if self.source is not None:
            self.publish(self.source())
        return self.text

    def close(self) -> None:
        """Stop serving."""
        self.httpd.shutdown()
        self.httpd.server_close()


__all__ = ["MetricsServer", "parse_address"]
