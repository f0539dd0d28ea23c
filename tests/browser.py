"""Headless Chromium for the browser tests (the built book, JupyterLab): a tiny Chrome DevTools
protocol client and a context manager that starts Chromium on a free port, offline.

Needs the Debian package `chromium` and the PyPI package `websocket-client`.
"""
from __future__ import annotations

import contextlib
import json
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from typing import Iterator

CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser")) if p), None)


class CDP:
    def __init__(self, ws_url: str):
        import websocket  # PyPI: websocket-client

        self.ws = websocket.create_connection(ws_url, timeout=90, suppress_origin=True)
        self.next_id = 0
        self.events: list[dict] = []

    def send(self, method: str, params: dict | None = None, timeout: float = 60.0) -> dict:
        self.next_id += 1
        my_id = self.next_id
        self.ws.send(json.dumps({"id": my_id, "method": method, "params": params or {}}))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == my_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)
        raise TimeoutError(method)

    def wait_event(self, name: str, timeout: float = 60.0) -> dict:
        deadline = time.monotonic() + timeout
        for ev in self.events:
            if ev["method"] == name:
                return ev
        while time.monotonic() < deadline:
            msg = json.loads(self.ws.recv())
            if "method" in msg:
                self.events.append(msg)
                if msg["method"] == name:
                    return msg
        raise TimeoutError(name)

    def evaluate(self, expression: str, timeout: float = 60.0):
        res = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                             "awaitPromise": True}, timeout=timeout)
        if "exceptionDetails" in res:
            raise RuntimeError(f"page script failed: {res['exceptionDetails']}")
        return res["result"].get("value")

    def close(self):
        self.ws.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def chromium(width: int = 1280, height: int = 1000) -> Iterator[CDP]:
    """A headless Chromium whose names resolve to 127.0.0.1 only; yields a CDP client of its page."""
    assert CHROMIUM, "chromium is not installed: `apt-get install -y chromium`"
    profile = tempfile.mkdtemp(prefix="book-chromium-")
    port = _free_port()
    args = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-default-apps", "--disable-extensions", "--no-first-run", "--no-default-browser-check",
        "--metrics-recording-only", "--mute-audio", "--hide-scrollbars",
        # belt and braces: even if a page asked for another host, the name would not resolve
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
        f"--user-data-dir={profile}", f"--remote-debugging-port={port}", "--remote-allow-origins=*",
        f"--window-size={width},{height}", "about:blank",
    ]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        targets = None
        for _ in range(100):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=2) as r:
                    targets = json.load(r)
                if any(t.get("type") == "page" for t in targets):
                    break
            except OSError:
                pass
            if proc.poll() is not None:
                raise RuntimeError("chromium exited: " + proc.stderr.read().decode(errors="replace")[-2000:])
            time.sleep(0.2)
        page = next(t for t in targets or [] if t.get("type") == "page")
        cdp = CDP(page["webSocketDebuggerUrl"])
        for domain in ("Page", "Network", "Runtime", "Log"):
            cdp.send(f"{domain}.enable")
        cdp.send("Emulation.setDeviceMetricsOverride",
                 {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        yield cdp
        cdp.close()
    finally:
        stop(proc, 10)
        shutil.rmtree(profile, ignore_errors=True)


def stop(proc: subprocess.Popen, timeout: float) -> None:
    """Ask a server process to end; kill it if it has not within `timeout` seconds."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
