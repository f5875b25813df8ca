"""Where `follow` says what it sees: a live status on a terminal (rich), plain lines when piped,
JSON lines for alerting pipelines; an alert command run with each alert's JSON; `/metrics`.
"""

from __future__ import annotations

import datetime as dt
import queue
import subprocess
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from logparse.escape import for_terminal, json_default, json_line
from logparse.follow.alerts import Alert
from logparse.follow.status import Status, clock_text, number_text, percent_text

if TYPE_CHECKING:
    from rich.console import Console
    from rich.live import Live

    from logparse.follow.live_metrics import QueuedSeries
    from logparse.follow.metrics_server import MetricsServer

RECENT_ALERTS = 6  # alerts shown under the terminal status
ALERT_COMMAND_TIMEOUT_S = 30.0


class PlainView:
    """One plain line per status update and per alert (output that is not a terminal)."""

    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out, self.err = out, err

    def status(self, status: Status) -> None:
        self.out.write(status.line() + "\n")
        self.out.flush()

    def alert(self, alert: Alert) -> None:
        self.out.write(for_terminal(alert.line()) + "\n")
        self.out.flush()

    def note(self, text: str) -> None:
        self.err.write(f"logparse follow: {for_terminal(text)}\n")
        self.err.flush()

    def waiting(self, text: str) -> None:
        """Nothing to show yet (no engine line read)."""

    def close(self) -> None:
        """Nothing to tear down."""


class JsonlView(PlainView):
    """One JSON object per status update (`"type": "status"`) and per alert (`"type": "alert"`)."""

    def status(self, status: Status) -> None:
        self._write(status.as_dict())

    def alert(self, alert: Alert) -> None:
        self._write(alert.as_dict())

    def _write(self, obj: dict[str, Any]) -> None:
        self.out.write(json_line(obj, ensure_ascii=False, default=json_default) + "\n")
        self.out.flush()


@dataclass
class TerminalView:
    """A live status panel redrawn in place (rich), with the latest alerts under it."""

    console: Console
    source: str
    latest: Status | None = None
    alerts: deque[str] = field(default_factory=lambda: deque(maxlen=RECENT_ALERTS))
    waiting_for: str = ""
    live: Live | None = None

    def _start(self) -> Live:
        if self.live is None:
            from rich.live import Live

            self.live = Live(self._panel(), console=self.console, auto_refresh=False, transient=False)
            self.live.start()
        return self.live

    def status(self, status: Status) -> None:
        self.latest = status
        self._start().update(self._panel(), refresh=True)

    def alert(self, alert: Alert) -> None:
        self.alerts.append(
            f"{clock_text(alert.time)} {alert.severity} {alert.alert} (line {alert.line_no}): {alert.message}"
        )
        self._start().update(self._panel(), refresh=True)

    def note(self, text: str) -> None:
        self.alerts.append(f"{dt.datetime.now().strftime('%H:%M:%S')} note: {text}")
        self._start().update(self._panel(), refresh=True)

    def waiting(self, text: str) -> None:
        self.waiting_for = text
        self._start().update(self._panel(), refresh=True)

    def close(self) -> None:
        if self.live is not None:
            self.live.update(self._panel(), refresh=True)
            self.live.stop()

    def _panel(self) -> Any:
        from rich.markup import escape
        from rich.panel import Panel
        from rich.table import Table
        from rich.text import Text

        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold")
        grid.add_column()
        s = self.latest
        if s is None:
            grid.add_row("status", escape(self.waiting_for or "reading..."))
        else:
            version = f" {s.version}" if s.version else ""
            grid.add_row("engine", escape(f"{s.engine}{version}   {s.lines:,} lines read"))
            grid.add_row("latest", escape(f"stats line {s.line_no or '-'} at {clock_text(s.time)}"))
            n = f"  N={s.concurrency}" if s.concurrency else ""
            grid.add_row("phase", escape(f"{s.phase if s.phase is not None else '-'}{n}"))
            grid.add_row("requests", f"running {number_text(s.running)}   waiting {number_text(s.waiting)}")
            grid.add_row("gen", f"{number_text(s.gen_tps, 1)} tok/s")
            grid.add_row("prefill", f"{number_text(s.prefill_tps, 1)} tok/s")
            grid.add_row("KV cache", percent_text(s.kv_usage))
            if s.spec_accept_len is not None or s.spec_accept_rate is not None:
                grid.add_row(
                    "spec accept",
                    f"{number_text(s.spec_accept_len, 2)} tokens/step ({percent_text(s.spec_accept_rate)})",
                )
            grid.add_row("window", escape(s.window.text() if s.window else "stable: none yet"))
        if self.alerts:
            grid.add_row("alerts", Text("\n".join(for_terminal(a) for a in self.alerts)))
        return Panel(grid, title=escape(f"logparse follow {self.source}"), expand=False)


class AlertCommand:
    """Runs a command with each alert's JSON on its stdin, one at a time, off the reading thread
    (a slow command delays no status); a command that fails is said once on stderr."""

    def __init__(self, command: str, err: TextIO) -> None:
        self.command, self.err = command, err
        self.queue: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.failures = 0
        self.thread = threading.Thread(target=self._run, name="logparse-on-alert", daemon=True)
        self.thread.start()

    def send(self, alert: Alert) -> None:
        self.queue.put(alert.as_dict())

    def _run(self) -> None:
        while (item := self.queue.get()) is not None:
            text = json_line(item, ensure_ascii=False, default=json_default) + "\n"
            try:
                done = subprocess.run(
                    self.command,
                    shell=True,
                    input=text.encode(),
                    timeout=ALERT_COMMAND_TIMEOUT_S,
                    check=False,
                )
                failed = done.returncode != 0
                why = f"exited {done.returncode}"
            except (OSError, subprocess.TimeoutExpired) as exc:
                failed, why = True, str(exc)
            if failed:
                self.failures += 1
                if self.failures == 1:
                    self.err.write(f"logparse follow: --on-alert command {why} (said once)\n")

    def close(self) -> None:
        """Wait for the alerts already sent."""
        self.queue.put(None)
        self.thread.join(timeout=ALERT_COMMAND_TIMEOUT_S)


@dataclass
class Reporter:
    """The sink's `Outputs`: the view, the alert command and the metrics page together."""

    view: PlainView | TerminalView
    command: AlertCommand | None = None
    server: MetricsServer | None = None
    alerts: int = 0

    def status(self, status: Status) -> None:
        self.view.status(status)

    def alert(self, alert: Alert) -> None:
        self.alerts += 1
        self.view.alert(alert)
        if self.command is not None:
            self.command.send(alert)

    def metrics(self, live: QueuedSeries) -> None:
        """Serve `live` (read when scraped)."""
        if self.server is not None and self.server.source is None:
            self.server.serve_from(live.series)

    def close(self) -> None:
        self.view.close()
        if self.command is not None:
            self.command.close()


__all__ = ["AlertCommand", "JsonlView", "PlainView", "Reporter", "TerminalView"]
