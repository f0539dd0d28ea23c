"""Which running Jupyter servers (JupyterLab) have a notebook open: --reset warns the learner, since
JupyterLab keeps its own copy of an open notebook, and its next save ("Overwrite") puts the
learner's old version back over the reset one.

A Jupyter server (jupyter_server 2, which JupyterLab 4 runs on) writes `jpserver-<pid>.json` into
the Jupyter runtime folder: its address, its token, its pid and the folder it serves. Its REST
API lists the sessions (a notebook tab and its kernel) by path, relative to that folder. Only
servers on this machine are asked, each for a second at most: a question that cannot be answered
is no answer, never an error.
"""
from __future__ import annotations

import json
import os
import socket
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

ASK_TIMEOUT = 1.0  # seconds for one server's list of sessions
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


def servers_with_open(notebook: Path) -> list[str]:
    """The addresses of the running Jupyter servers that have `notebook` open (a session for it)."""
    target = Path(notebook).resolve()
    found = []
    for info in _running_servers():
        root = Path(info.get("root_dir") or info.get("notebook_dir") or ".")
        for session in _sessions(info):
            relative = session.get("path") or (session.get("notebook") or {}).get("path")
            if relative and (root / relative).resolve() == target:
                found.append(info["url"])
                break
    return found


def _running_servers() -> list[dict]:
    """The server files in Jupyter's runtime folder whose process still runs."""
    try:
        from jupyter_core.paths import jupyter_runtime_dir
    except ImportError:  # no Jupyter here: nothing can have the notebook open
        return []
    servers = []
    for path in sorted(Path(jupyter_runtime_dir()).glob("jpserver-*.json")):
        try:
            info = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(info, dict) and info.get("url") and _alive(info.get("pid")):
            servers.append(info)
    return servers


def _alive(pid) -> bool:
    try:
        os.kill(int(pid), 0)
    except (TypeError, ValueError, ProcessLookupError):
        return False
    except PermissionError:  # another user's: running
        return True
    return True


def _sessions(info: dict) -> list[dict]:
    url = info["url"].rstrip("/") + "/api/sessions"
    if urlsplit(url).hostname not in (*LOCAL_HOSTS, socket.gethostname()):
        return []
    request = urllib.request.Request(url, headers={"Authorization": f"token {info.get('token', '')}"})
    try:
        with urllib.request.urlopen(request, timeout=ASK_TIMEOUT) as answer:
            sessions = json.load(answer)
    except (OSError, ValueError):
        return []
    return [s for s in sessions if isinstance(s, dict)] if isinstance(sessions, list) else []
