"""Headless Chromium driven over the Chrome DevTools protocol (a websocket), with no network.

Chromium starts with `--remote-debugging-port=0` on 127.0.0.1 and every other request refused
(a dead proxy, unresolvable hosts). `Browser.page(url)` opens a tab and records its console
messages and script exceptions; `Page.evaluate` runs JavaScript and returns its value.
"""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

import websocket

CHROMIUM = Path("/usr/bin/chromium")
VIEWPORT = (1400, 900)


class Page:
    """One tab: commands in, results and events out."""

    def __init__(self, url: str) -> None:
        self.ws = websocket.create_connection(url, timeout=60, suppress_origin=True)
        self.ids = itertools.count(1)
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        """Send one command and wait for its result (events that arrive meanwhile are kept)."""
        ident = next(self.ids)
        self.ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression (a promise is awaited)."""
        result = self.send("Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:80]}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, *, timeout: float = 30.0) -> Any:
        """Evaluate `expression` until it is truthy; its value (AssertionError on timeout)."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for: {expression}")
            time.sleep(0.1)

    def mouse(self, kind: str, x: float, y: float, **extra: Any) -> None:
        """One mouse event at page coordinates (`mouseMoved`, `mousePressed`, `mouseWheel`, ...)."""
        self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, **extra)

    def click(self, x: float, y: float) -> None:
        """Press and release the left button at (x, y)."""
        self.mouse("mouseMoved", x, y)
        self.mouse("mousePressed", x, y, button="left", clickCount=1)
        self.mouse("mouseReleased", x, y, button="left", clickCount=1)

    def problems(self) -> list[str]:
        """Console errors and uncaught exceptions seen so far."""
        self.evaluate("0")  # collect the events that arrived
        out = []
        for e in self.events:
            params = e.get("params", {})
            if e.get("method") == "Runtime.exceptionThrown":
                out.append(json.dumps(params.get("exceptionDetails", {}))[:500])
            elif e.get("method") == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                out.append(
                    " ".join(str(a.get("value", a.get("description"))) for a in params.get("args", []))
                )
            elif e.get("method") == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                out.append(params["entry"].get("text", ""))
        return out

    def close(self) -> None:
        self.ws.close()


class Browser:
    """A headless Chromium process for one test session."""

    def __init__(self, profile: Path) -> None:
        cmd = [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--no-default-browser-check",
            "--hide-scrollbars",
            f"--window-size={VIEWPORT[0]},{VIEWPORT[1]}",
            f"--user-data-dir={profile}",
            "--proxy-server=127.0.0.1:9",
            "--proxy-bypass-list=<-loopback>",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0",
            "about:blank",
        ]
        self.process = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        assert self.process.stderr is not None
        deadline = time.monotonic() + 60
        self.port = None
        while self.port is None:
            line = self.process.stderr.readline()
            found = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
            if found:
                self.port = int(found.group(1))
            elif not line and self.process.poll() is not None:
                raise RuntimeError("chromium exited before its DevTools endpoint was up")
            elif time.monotonic() > deadline:
                raise RuntimeError("no DevTools endpoint from chromium within 60 s")

    def page(self, url: str) -> Page:
        """A new tab that loads `url` and waits for its load event; console and errors recorded."""
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}/json/new?about:blank", method="PUT")
        with urllib.request.urlopen(request, timeout=30) as answer:  # loopback only
            target = json.load(answer)
        page = Page(target["webSocketDebuggerUrl"])
        for domain in ("Page", "Runtime", "Log"):
            page.send(f"{domain}.enable")
        page.send(
            "Emulation.setDeviceMetricsOverride",
            width=VIEWPORT[0],
            height=VIEWPORT[1],
            deviceScaleFactor=1,
            mobile=False,
        )
        page.send("Page.navigate", url=url)
        page.wait_for("document.readyState === 'complete'", timeout=60)
        return page

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
