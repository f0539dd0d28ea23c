"""The warm checker (checker/run/client.py, checker/server.py): the first `python -m checker` starts it,
the next ones go through it and print exactly what they would print themselves, with the same exit
status; --no-server and TRITON_PUZZLES_NO_SERVER=1 go around it; an edited checker gets a server of
its own; Ctrl-C stops the check and not the server; --stop-server stops it. Every server here lives
in a temporary folder of its own and is gone when its test ends."""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from checker import registry, stubs

from checker.run import client
from checker.puzzle.model import REPO_ROOT

P01 = registry.get("p01")
SIGINT_AS_A_TERMINAL = ("import runpy, signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
                        "runpy.run_module('checker', run_name='__main__', alter_sys=True)")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _stop_all(folder: Path) -> list[int]:
    """Ask every server in `folder` to stop; their pids (from their lock files)."""
    pids = [int(lock.read_text() or 0) for lock in folder.glob("*.lock")]
    for path in folder.glob("*.sock"):
        sock = client._connect(path)
        if sock is not None:
            client._send(sock, {"op": "stop"})
            client._Lines(sock).read(client.ANSWER_TIMEOUT)
            sock.close()
    return [pid for pid in pids if pid]


@contextlib.contextmanager
def _runtime():
    """(folder, env): a runtime folder of its own (short: a socket's path has room for about 107
    bytes) and an environment that lets `python -m checker` use a server there. Afterwards no
    server is left."""
    folder = Path(tempfile.mkdtemp(prefix="tp-srv-"))
    env = {k: v for k, v in os.environ.items() if k != client.NO_SERVER_ENV}
    env[client.DIR_ENV] = str(folder)
    try:
        yield folder, env
    finally:
        pids = _stop_all(folder)
        deadline = time.monotonic() + 20
        while any(_alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = [p for p in pids if _alive(p)]
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(folder, ignore_errors=True)
        assert not left, f"servers still running after the test: {left}"


@pytest.fixture
def runtime():
    with _runtime() as folder_and_env:
        yield folder_and_env


@pytest.fixture(scope="module")
def warm():
    """(folder, env, first): a warm server of this checkout, shared by the tests of this module,
    and `first`, the run of `p01 --solution` here that started it."""
    with _runtime() as (folder, env):
        first = checker(env, "p01", "--solution")
        assert first.returncode == 0, first.stderr
        wait_for_server(folder)
        yield folder, env, first


def checker(env: dict, *args: str, cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "checker", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def _tag(root: Path) -> str:
    import hashlib
    return hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:10]


def sockets(folder: Path, root: Path = REPO_ROOT) -> list[Path]:
    return sorted(folder.glob(f"{_tag(root)}-*.sock"))


def wait_for_server(folder: Path, root: Path = REPO_ROOT, but_not=()) -> Path:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = [s for s in sockets(folder, root) if s not in but_not]
        if found:
            return found[0]
        time.sleep(0.1)
    raise AssertionError(f"no server came up; its log: {[p.read_text() for p in folder.glob('*.log')]}")


def served(folder: Path) -> list[str]:
    """The commands the servers in `folder` ran, as their logs name them."""
    return [line.split(" ", 1)[1].rsplit(" in ", 1)[0] for log in sorted(folder.glob("*.log"))
            for line in log.read_text().splitlines() if ": status " in line]


def _logs(folder: Path) -> str:
    """The servers' logs, for a failure's message: what they ran, refused, or why they exited."""
    return "\n".join(log.read_text() for log in sorted(folder.glob("*.log")))


def test_the_second_run_goes_through_the_server_and_prints_the_same(warm):
    folder, env, first = warm
    before = len(served(folder))
    second = checker(env, "p01", "--solution")
    assert served(folder)[before:] == ["p01 --solution: status 0"]
    assert (second.returncode, second.stdout, second.stderr) == (0, first.stdout, first.stderr)
    assert "ALL CORRECT" in second.stdout


def test_a_failing_kernels_status_and_json_come_through(warm, tmp_path):
    folder, env, _ = warm
    notebook = json.loads(P01.notebook.read_text(encoding="utf-8"))
    wrong = P01.solution.read_text(encoding="utf-8").replace("x + 10.0)", "x + 1.0)")
    for cell in stubs.kernel_cells(notebook):
        cell["source"] = wrong
    path = tmp_path / "learner.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    before = len(served(folder))
    for extra in ([], ["--json"]):
        here = checker(env, "p01", "--notebook", str(path), *extra, "--no-server")
        there = checker(env, "p01", "--notebook", str(path), *extra)
        assert (there.returncode, there.stdout, there.stderr) == (1, here.stdout, here.stderr)
    usage = checker(env, "p01", "--timeout", "0")  # argparse's own exit, through the server
    assert usage.returncode == 2 and "above 0" in usage.stderr
    assert served(folder)[before:] == [f"p01 --notebook {path}: status 1", f"p01 --notebook {path} --json: status 1",
                                       "p01 --timeout 0: status 2"]


def test_no_server_and_the_variable_go_around_it(warm):
    folder, env, _ = warm
    before = len(served(folder))
    assert checker(env, "p01", "--solution", "--no-server").returncode == 0
    assert checker({**env, client.NO_SERVER_ENV: "1"}, "p01", "--solution").returncode == 0
    assert len(served(folder)) == before


def test_ctrl_c_stops_the_check_and_not_the_server(warm):
    folder, env, _ = warm
    before = len(served(folder))
    run = subprocess.Popen([sys.executable, "-c", SIGINT_AS_A_TERMINAL, "p22", "--solution"], cwd=REPO_ROOT,
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert run.stdout.readline().startswith("Puzzle 22")  # the server runs the check now
    run.send_signal(signal.SIGINT)
    out, err = run.communicate(timeout=60)
    assert run.returncode == 130
    assert err.strip() == client.INTERRUPTED.strip(), err
    again = checker(env, "p01", "--solution")
    assert again.returncode == 0
    assert served(folder)[before:] == ["p22 --solution: status 130", "p01 --solution: status 0"], _logs(folder)


def test_the_log_names_a_command_before_its_client_has_the_status(monkeypatch):
    """The tests (and anyone) read a server's log as soon as the client has its status: the line
    naming the command is written first. Written after, a loaded machine let the test read the log
    without it, and a command the server had run looked as though the client ran it (issue 35, 21)."""
    from checker import server as server_module

    said = []
    monkeypatch.setattr(server_module, "_say", lambda message: said.append(("log", message)))
    monkeypatch.setattr(server_module, "_run_cli", lambda argv: 0)

    class Ticket(server_module.Ticket):
        def send(self, frame: dict) -> bool:
            said.append(("frame", frame))
            return True

    server = server_module.Server.__new__(server_module.Server)
    server.turn, server.stop, server.warm = threading.Lock(), threading.Event(), threading.Event()
    server.current, server.running, server.raised = None, False, False
    ticket = Ticket(None, {"argv": ["p01", "--solution"], "cwd": str(REPO_ROOT), "tty": [False, False]})
    server._serve(ticket)
    assert said.index(("log", "p01 --solution: status 0 in 0.0 s")) < said.index(("frame", {"exit": 0})), said


def test_an_edited_checker_gets_a_new_server(runtime, tmp_path):
    folder, env = runtime
    copy = tmp_path / "checkout"
    for name in ("checker", "solutions", "puzzles"):
        shutil.copytree(REPO_ROOT / name, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
    assert checker(env, "p01", "--solution", cwd=copy).returncode == 0
    old = wait_for_server(folder, copy)
    with open(copy / "checker" / "diagnosis" / "model.py", "a", encoding="utf-8") as edit:
        edit.write("# an edit\n")
    edited = checker(env, "p01", "--solution", cwd=copy)
    assert edited.returncode == 0 and served(folder) == []  # ran here, not by the old server
    new = wait_for_server(folder, copy, but_not=[old])
    deadline = time.monotonic() + 30  # the old one sees its files change within seconds
    while old.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not old.exists() and sockets(folder, copy) == [new]


def test_stop_server_stops_it(runtime):
    folder, env = runtime
    assert checker(env, "p01", "--solution").returncode == 0  # here; it starts the server
    wait_for_server(folder)
    pid = int(next(folder.glob("*.lock")).read_text())
    stop = checker(env, "--stop-server")
    assert stop.returncode == 0 and "Stopped" in stop.stderr
    deadline = time.monotonic() + 20
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(pid) and sockets(folder) == []
    assert "No warm checker" in checker(env, "--stop-server").stderr
