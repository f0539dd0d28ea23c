"""Opening a puzzle notebook in JupyterLab changes nothing in it.

JupyterLab writes two things into a notebook when it opens it: the kernel's spec (`kernelspec`)
and the `language_info` that the kernel reports. The puzzle notebooks carry exactly those
(checker.stubs.NOTEBOOK_METADATA), all but language_info's "version", the machine's Python
version, which the save hook checker.stubs.keep_metadata keeps out. These tests compare with a
running ipykernel; tests/test_jupyterlab.py opens and saves a notebook in JupyterLab itself.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

nbformat = pytest.importorskip("nbformat")  # the GPU host runs the suite without the book's tools

from checker import new, registry, stubs
from checker.puzzle.model import REPO_ROOT


@pytest.fixture(scope="module")
def kernel_reports():
    """(kernelspec as JupyterLab writes it, language_info) of a running python3 kernel."""
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3")
    try:
        info = kc.kernel_info(reply=True, timeout=60)["content"]["language_info"]
        spec = km.kernel_spec
        return {"name": km.kernel_name, "display_name": spec.display_name, "language": spec.language}, info
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_the_metadata_is_what_jupyterlab_writes_on_opening_a_notebook(kernel_reports):
    kernelspec, language_info = kernel_reports
    assert stubs.NOTEBOOK_METADATA["kernelspec"] == kernelspec
    assert language_info.pop("version"), "the kernel reports a Python version (the hook drops it)"
    assert stubs.NOTEBOOK_METADATA["language_info"] == language_info


@pytest.mark.parametrize("puzzle", registry.all_puzzles(), ids=lambda p: p.key)
def test_each_puzzle_notebook_is_as_jupyter_saves_it(puzzle):
    text = puzzle.notebook.read_text(encoding="utf-8")
    assert json.loads(text)["metadata"] == stubs.NOTEBOOK_METADATA, \
        f"{puzzle.notebook.name}: `python -m checker.stubs --write {puzzle.key}` writes its metadata"
    # the server's format: sorted keys, one-space indent, each source split into lines
    assert text == nbformat.writes(nbformat.reads(text, as_version=4)) + "\n", \
        f"{puzzle.notebook.name}: `python -m checker.stubs --write {puzzle.key}` writes it as Jupyter does"


def test_a_new_puzzles_notebook_gets_the_same_metadata():
    assert new.notebook(99, "Title", [("forward", "Title", ["k"])])["metadata"] == stubs.NOTEBOOK_METADATA


class _ContentsManager:  # what the hook uses of Jupyter's
    def __init__(self, root_dir):
        self.root_dir = str(root_dir)


def _saved(tmp_path, on_disk: dict | None) -> dict:
    """The language_info the hook lets through, for a notebook JupyterLab opened (it added a
    version), whose file on disk has `on_disk` as its language_info (None: no file yet)."""
    if on_disk is not None:
        (tmp_path / "nb.ipynb").write_text(json.dumps({"metadata": {"language_info": on_disk}}))
    info = dict(stubs.NOTEBOOK_METADATA["language_info"], version="3.99.1")
    model = {"type": "notebook", "content": {"metadata": {"language_info": info}, "cells": []}}
    stubs.keep_metadata(model=model, path="/nb.ipynb", contents_manager=_ContentsManager(tmp_path))
    return model["content"]["metadata"]["language_info"]


def test_the_save_hook_keeps_a_notebook_without_a_python_version_so(tmp_path):
    assert _saved(tmp_path, stubs.NOTEBOOK_METADATA["language_info"]) == stubs.NOTEBOOK_METADATA["language_info"]


def test_the_save_hook_leaves_other_notebooks_as_jupyterlab_sends_them(tmp_path):
    assert _saved(tmp_path, None)["version"] == "3.99.1"  # not saved before
    assert _saved(tmp_path, {"name": "python", "version": "3.10.0"})["version"] == "3.99.1"
    plain = {"type": "file", "content": "text"}
    stubs.keep_metadata(model=plain, path="/a.txt", contents_manager=_ContentsManager(tmp_path))
    assert plain == {"type": "file", "content": "text"}


def test_the_readmes_jupyter_lab_command_saves_an_opened_notebook_unchanged(tmp_path):
    """The README's `python -m checker lab` (checker/lab.py: its save hook, --allow-root as root): a
    notebook saved through Jupyter's contents API with the Python version another kernel adds on
    opening it is saved byte for byte as it was. (tests/test_jupyterlab.py does it in a browser.)"""
    command = re.search(r"`(python -m checker lab)`", (REPO_ROOT / "README.md").read_text(encoding="utf-8")).group(1)
    notebook = tmp_path / "p01.ipynb"
    shutil.copyfile(registry.get("p01").notebook, notebook)
    before = notebook.read_bytes()
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    token = secrets.token_hex(16)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])))
    server = subprocess.Popen([sys.executable, *command.split()[1:], "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", f"--IdentityProvider.token={token}",
                               f"--ServerApp.root_dir={tmp_path}"],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2).close()
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, "the server did not start"
                time.sleep(0.3)
        address = f"{url}/api/contents/{notebook.name}?token={token}"
        with urllib.request.urlopen(address, timeout=60) as reply:
            model = json.load(reply)
        model["content"]["metadata"]["language_info"]["version"] = "3.99.1"  # as JupyterLab adds it
        body = json.dumps({"type": "notebook", "format": "json", "content": model["content"]}).encode()
        request = urllib.request.Request(address, data=body, method="PUT",
                                         headers={"Content-Type": "application/json"})
        urllib.request.urlopen(request, timeout=60).close()
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
    assert notebook.read_bytes() == before
