"""`python -m checker lab` (checker/lab.py): one command that starts JupyterLab for the puzzles, as
root too, with a kernel that leaves the Python version out of the notebooks it opens.
tests/test_jupyterlab.py drives the same command in a browser."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from checker import lab, stubs


def test_the_command_sets_the_save_hook_and_allows_root_only_as_root():
    as_root, as_user = lab.lab_command([], root=True), lab.lab_command(["--no-browser"], root=False)
    for command in (as_root, as_user):
        assert command[:3] == [sys.executable, "-m", "jupyterlab"]
        assert "--ContentsManager.pre_save_hook=checker.stubs.keep_metadata" in command
        assert f"--ServerApp.root_dir={lab.REPO_ROOT}" in command
    assert "--allow-root" in as_root and "--allow-root" not in as_user and as_user[-1] == "--no-browser"
    assert not any(a.startswith("--ServerApp.root_dir=") and a.endswith(str(lab.REPO_ROOT))
                   for a in lab.lab_command(["--ServerApp.root_dir=/elsewhere"], root=False))


def test_the_kernel_reports_the_notebooks_language_info_without_a_version(tmp_path, monkeypatch):
    """What JupyterLab writes into a notebook on opening it is what the notebook already holds."""
    pytest.importorskip("ipykernel")
    from jupyter_client.manager import start_new_kernel

    folder = lab.write_kernel_spec(tmp_path)
    spec = json.loads((folder / "kernel.json").read_text())
    assert folder.name == stubs.NOTEBOOK_METADATA["kernelspec"]["name"]
    assert spec["display_name"] == stubs.NOTEBOOK_METADATA["kernelspec"]["display_name"]
    for name, value in lab.lab_environment(tmp_path).items():
        monkeypatch.setenv(name, value)
    km, kc = start_new_kernel(kernel_name="python3")
    try:
        assert km.kernel_spec.argv[:3] == [sys.executable, "-m", "checker.lab"]
        info = kc.kernel_info(reply=True, timeout=60)["content"]["language_info"]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert info == stubs.NOTEBOOK_METADATA["language_info"]


def test_python_m_checker_lab_reaches_jupyterlab():
    """The launcher hands its arguments to JupyterLab (--version answers without starting a server)."""
    done = subprocess.run([sys.executable, "-m", "checker", "lab", "--version"], capture_output=True, text=True,
                          timeout=120, cwd=lab.REPO_ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()[:1].isdigit(), done.stdout


def test_stopping_the_launcher_stops_jupyterlab(tmp_path):
    """The launcher becomes JupyterLab (exec): a kill or Ctrl-C reaches the server itself, and no
    orphaned server is left listening."""
    import secrets
    import socket
    import time
    import urllib.request
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    token = secrets.token_hex(8)
    proc = subprocess.Popen([sys.executable, "-m", "checker", "lab", "--no-browser", "--ServerApp.ip=127.0.0.1",
                             f"--ServerApp.port={port}", f"--IdentityProvider.token={token}",
                             f"--ServerApp.root_dir={tmp_path}"], cwd=lab.REPO_ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}", timeout=2).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, "JupyterLab did not start"
                time.sleep(0.3)
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    time.sleep(1.0)
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}", timeout=2).close()
