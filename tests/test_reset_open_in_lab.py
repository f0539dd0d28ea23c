"""--reset and a notebook open in JupyterLab (checker/reset.py, checker/open_notebooks.py): JupyterLab
keeps its own copy of an open notebook, and its next save ("Overwrite") puts the learner's old
kernels back over the reset. The reset says, in one sentence, to reload the notebook from disk;
and when a running Jupyter server has that notebook open, it says so.

A real Jupyter server (jupyter_server, which JupyterLab runs on) serves a copy of puzzle 1's
notebook with a session (a tab and its kernel) open on it, its server file in a runtime folder of
the test's own."""
from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from browser import _free_port, stop
from checker import registry
from checker.puzzle.model import REPO_ROOT
from checker.reset import RELOAD

P01 = registry.get("p01")


def _reset(notebook: Path, runtime: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(runtime), "TRITON_PUZZLES_NO_SERVER": "1"}
    return subprocess.run([sys.executable, "-m", "checker", "p01", "--reset", "--notebook", str(notebook)],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120)


def _one_sentence(text: str) -> bool:
    return text.count(". ") == 0 and text.endswith(".")


def test_the_reset_says_to_reload_the_notebook_from_disk(tmp_path):
    notebook = tmp_path / "p01_copy.ipynb"
    shutil.copyfile(P01.notebook, notebook)
    run = _reset(notebook, tmp_path / "runtime")  # no server there
    assert run.returncode == 0, run.stderr
    advice = run.stdout.strip().splitlines()[-1]
    assert advice.startswith("If JupyterLab has it open") and RELOAD in advice and _one_sentence(advice), advice


@pytest.fixture()
def jupyter_server(tmp_path):
    """(url, token, runtime folder): a Jupyter server on 127.0.0.1 serving tmp_path."""
    pytest.importorskip("jupyter_server")
    runtime, token, port = tmp_path / "runtime", secrets.token_hex(16), _free_port()
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(runtime)}
    proc = subprocess.Popen([sys.executable, "-m", "jupyter_server", "--no-browser", "--allow-root",
                             f"--port={port}", "--ip=127.0.0.1", f"--IdentityProvider.token={token}",
                             f"--ServerApp.root_dir={tmp_path}"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield _serving(proc, runtime, token), token, runtime
    finally:
        stop(proc, 20)


def _serving(proc: subprocess.Popen, runtime: Path, token: str) -> str:
    """The server's URL once it answers. Its port is read from its own server file: when the port we
    picked was taken in the meantime, jupyter_server moves on to the next free one."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the Jupyter server exited"
        files = list(runtime.glob("jpserver-*.json"))
        if files:
            try:
                url = f"http://127.0.0.1:{json.loads(files[0].read_text())['port']}/"
                _api(url, token, "api/status")
                return url
            except (OSError, ValueError, KeyError):  # file half written, or not listening yet
                pass
        time.sleep(0.2)
    raise AssertionError("the Jupyter server did not answer within 60 s")


def _api(url: str, token: str, path: str, body: dict | None = None, method: str = "GET"):
    request = urllib.request.Request(url + path, method=method, headers={"Authorization": f"token {token}"},
                                     data=None if body is None else json.dumps(body).encode())
    with urllib.request.urlopen(request, timeout=60) as answer:
        data = answer.read()
    return json.loads(data) if data else None


def test_the_reset_names_the_jupyter_server_that_has_the_notebook_open(tmp_path, jupyter_server):
    url, token, runtime = jupyter_server
    notebook = tmp_path / "p01_copy.ipynb"
    shutil.copyfile(P01.notebook, notebook)
    other = tmp_path / "p02_copy.ipynb"
    shutil.copyfile(registry.get("p02").notebook, other)
    session = _api(url, token, "api/sessions", {"path": notebook.name, "type": "notebook", "name": "",
                                                "kernel": {"name": "python3"}}, "POST")
    try:
        open_one = _reset(notebook, runtime)
        assert open_one.returncode == 0, open_one.stderr
        advice = open_one.stdout.strip().splitlines()[-1]
        assert advice.startswith(f"JupyterLab has it open now ({url})") and RELOAD in advice, advice
        assert _one_sentence(advice), advice
        closed_one = _reset(other, runtime)  # the server has another notebook open, not this one
        assert closed_one.stdout.strip().splitlines()[-1].startswith("If JupyterLab has it open")
    finally:
        _api(url, token, f"api/sessions/{session['id']}", method="DELETE")
