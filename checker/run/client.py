"""The command line's way to a warm checker: ask a running server (checker/server.py) to run the
command, or say that none answered so that it runs here as always.

This module is imported first by `python -m checker`, before anything heavy: it uses the standard
library only (no torch, triton or numpy), so that a warm answer costs a socket's round trip.

A server belongs to one key: this checkout's absolute root, the Python executable, a hash of the
checker's own .py files and the environment variables that change what a check does. Its socket is
named by that key, so a client never reaches a server that runs other code or another environment:
an edited checker, another checkout or another virtual environment gets a server of its own.

Protocol: one JSON line from the client ({"op": "run", ...} or {"op": "stop"}); JSON lines back:
{"hello"} at once, {"wait"}/{"beat"} every second, then {"start"}, {"out"}/{"err"} text as it is
written, and {"exit": status}; or {"busy"} / {"stale"} instead of {"start"}: the client runs the
command itself. A Ctrl-C in the client sends {"op": "interrupt"}.
"""
from __future__ import annotations

import hashlib
import json
import os
import socket
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]        # this checkout (the checker's parent folder)
PACKAGE = Path(__file__).resolve().parents[1]   # the checker package

IDLE_EXIT = 600.0       # seconds: a server with no request for this long exits
CONNECT_TIMEOUT = 1.0   # seconds to connect to the socket
ANSWER_TIMEOUT = 3.0    # seconds for a server's first answer: longer is a hung server, checked here instead
SILENCE_TIMEOUT = 10.0  # seconds without a frame (the server beats every second) before giving up on it
BUSY_WAIT = 10.0        # seconds a command waits for another client's check; then it runs here
INTERRUPT_WAIT = 5.0    # seconds after a Ctrl-C for the server's last lines and status

NO_SERVER_ENV = "TRITON_PUZZLES_NO_SERVER"
DIR_ENV = "TRITON_PUZZLES_SERVER_DIR"   # the runtime folder (the tests use a temporary one)
# environment variables that change what a check does or how its workers start: part of the key
ENV_PREFIXES = ("TRITON_", "CUDA_", "TORCH", "PYTORCH_", "OMP_", "MKL_", "NVIDIA_", "PYTHON")
ENV_NAMES = ("LD_LIBRARY_PATH", "LD_PRELOAD", "HOME")
OWN_PREFIX = "TRITON_PUZZLES_"          # the server's own settings are not part of the key,
KEYED_OWN = ("TRITON_PUZZLES_STATE",)   # but for those that change where a check records its outcome
NO_SERVER, STOP_SERVER = "--no-server", "--stop-server"
INTERRUPTED = "\nInterrupted: the check stopped, and nothing was written."  # as checker.cli says it


EXIT_PIPE = 141  # what a shell reports for a command whose reader went away (128 + SIGPIPE)


def quiet_stdout() -> None:
    """Point stdout at /dev/null after its reader went away (`| head`), so that Python's last flush
    at exit finds no closed pipe either: the command stops quietly, as a shell tool does."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def disabled(argv: list[str]) -> bool:
    value = os.environ.get(NO_SERVER_ENV, "").strip().lower()
    return NO_SERVER in argv or value not in ("", "0", "false", "no")


def relevant_env(environ=None) -> dict:
    environ = os.environ if environ is None else environ
    return {k: v for k, v in sorted(environ.items())
            if (k.startswith(ENV_PREFIXES) or k in ENV_NAMES) and (not k.startswith(OWN_PREFIX) or k in KEYED_OWN)}


def checker_hash() -> str:
    """sha256 of the checker package's .py files (names and contents)."""
    digest = hashlib.sha256()
    for path in sorted(PACKAGE.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        digest.update(str(path.relative_to(PACKAGE)).encode() + b"\0")
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(b"unreadable")
        digest.update(b"\0")
    return digest.hexdigest()


def repo_tag() -> str:
    return hashlib.sha256(str(ROOT).encode()).hexdigest()[:10]


def server_key(environ=None) -> str:
    parts = [str(ROOT), sys.executable, checker_hash(), relevant_env(environ)]
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:24]


def runtime_dir() -> Path | None:
    """A folder of this user's own (0700) for the sockets and logs; None if none can be had safely."""
    chosen = os.environ.get(DIR_ENV)
    if chosen:
        candidates = [Path(chosen)]
    else:
        candidates = []
        if os.environ.get("XDG_RUNTIME_DIR"):
            candidates.append(Path(os.environ["XDG_RUNTIME_DIR"]) / "triton-puzzles")
        candidates.append(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "triton-puzzles")
        candidates.append(Path("/tmp") / f"triton-puzzles-{os.getuid()}")
    for folder in candidates:
        if len(str(folder)) > 60:  # a socket's path has room for about 107 bytes
            continue
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            info = folder.stat()
        except OSError:
            continue
        if info.st_uid == os.getuid() and not info.st_mode & 0o077:
            return folder
    return None


def paths(folder: Path, key: str) -> dict:
    stem = folder / f"{repo_tag()}-{key}"
    return {"socket": Path(f"{stem}.sock"), "lock": Path(f"{stem}.lock"), "log": Path(f"{stem}.log")}


class _Lines:
    """JSON lines from a socket with a deadline per line."""

    def __init__(self, sock: socket.socket):
        self.sock, self.pending = sock, b""

    def read(self, timeout: float) -> dict | None:
        """The next frame, or None when the server closed the connection or said nothing in time."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(1 << 16)
            except (socket.timeout, OSError):
                return None
            if not chunk:
                return None
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        try:
            return json.loads(line)
        except ValueError:
            return {}


def _connect(path: Path) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(CONNECT_TIMEOUT)
    try:
        sock.connect(str(path))
        return sock
    except OSError:  # no socket, a dead server's socket, a full queue
        sock.close()
        return None


def _send(sock: socket.socket, message: dict) -> bool:
    try:
        sock.settimeout(CONNECT_TIMEOUT)
        sock.sendall((json.dumps(message) + "\n").encode())
        return True
    except OSError:
        return False


class _Gone(Exception):
    """The server stopped answering mid-check."""


def run_via_server(argv: list[str]) -> int | None:
    """The command's exit status, run by this checkout's warm server; None when none ran it (none
    answers, it is busy with another check for long, or it stopped before starting this one)."""
    folder = runtime_dir()
    if folder is None:
        return None
    key = server_key()
    path = paths(folder, key)["socket"]
    if not path.exists():
        return None
    sock = _connect(path)
    if sock is None:
        return None
    try:
        return _ask(sock, key, argv)
    finally:
        sock.close()


def _ask(sock: socket.socket, key: str, argv: list[str]):
    import shutil
    size = shutil.get_terminal_size()  # argparse wraps --help to it
    request = {"op": "run", "key": key, "argv": argv, "cwd": os.getcwd(), "env": relevant_env(),
               "tty": [sys.stdout.isatty(), sys.stderr.isatty()], "terminal": [size.columns, size.lines]}
    if not _send(sock, request):
        return None
    lines = _Lines(sock)
    hello = lines.read(ANSWER_TIMEOUT)
    if not hello or "hello" not in hello:
        return None
    while True:  # its turn: after the server's warm-up, or another client's check
        frame = lines.read(SILENCE_TIMEOUT)
        if frame is None or "stale" in frame or "busy" in frame:
            return None
        if "start" in frame:
            break
    try:
        try:
            return _stream(lines)
        except KeyboardInterrupt:
            _send(sock, {"op": "interrupt"})
            return _after_interrupt(lines)
        except BrokenPipeError:  # the reader went away (`| head`): the server's check stops too
            _send(sock, {"op": "interrupt"})
            raise
    except _Gone as gone:
        if gone.args[0]:  # part of the report is on the screen: say why it starts again
            print("(the warm checker stopped answering: checking again here)", file=sys.stderr, flush=True)
        return None


def _write(frame: dict) -> bool:
    for name, stream in (("out", sys.stdout), ("err", sys.stderr)):
        if name in frame:
            stream.write(frame[name])
            stream.flush()
            return True
    return False


def _stream(lines: _Lines) -> int:
    wrote = False
    while True:
        frame = lines.read(SILENCE_TIMEOUT)
        if frame is None:
            raise _Gone(wrote)
        if "exit" in frame:
            return int(frame["exit"])
        wrote |= _write(frame)


def _after_interrupt(lines: _Lines) -> int:
    """The server's last lines after a Ctrl-C (its one line saying so), a little while at most; a
    second Ctrl-C leaves at once."""
    deadline = time.monotonic() + INTERRUPT_WAIT
    try:
        while time.monotonic() < deadline:
            frame = lines.read(max(0.1, deadline - time.monotonic()))
            if frame is None:
                break
            if "exit" in frame:
                return int(frame["exit"])
            _write(frame)
    except KeyboardInterrupt:
        pass
    print(INTERRUPTED, file=sys.stderr, flush=True)
    return 130


def stop_servers() -> int:
    """--stop-server: stop this checkout's servers (every key: other environments too)."""
    folder = runtime_dir()
    stopped = 0
    for path in sorted(folder.glob(f"{repo_tag()}-*.sock")) if folder else []:
        sock = _connect(path)
        if sock is None:
            continue
        try:
            if _send(sock, {"op": "stop"}) and (_Lines(sock).read(ANSWER_TIMEOUT) or {}).get("stopping"):
                stopped += 1
        finally:
            sock.close()
    print("Stopped the warm checker." if stopped else "No warm checker was running.", file=sys.stderr)
    return 0


def worth_a_server(argv: list[str], status: int) -> bool:
    """Start a server after this command ran here? After a check (a puzzle or --all) that could
    run; not after --help, --list, --reset or a usage error."""
    if status == 2 or any(a in ("-h", "--help", "--list", "--reset", "--progress", STOP_SERVER) for a in argv):
        return False
    return True


def start_server() -> None:
    """A detached server for the next command: its own session (no terminal, no Ctrl-C of ours),
    stdio to a log file; this command does not wait for it. A second one for the same key exits at
    once (the key's lock file)."""
    import subprocess
    folder = runtime_dir()
    if folder is None:
        return
    key = server_key()
    files = paths(folder, key)
    try:
        with open(files["log"], "a", encoding="utf-8") as log:
            subprocess.Popen([sys.executable, "-m", "checker.server", "--key", key, "--dir", str(folder)],
                             cwd=ROOT, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                             start_new_session=True, close_fds=True)
    except OSError:
        pass


def main(argv: list[str]) -> int | None:
    """`python -m checker`'s first step: the status of a command the server ran (or --stop-server),
    or None to run it here."""
    if STOP_SERVER in argv:
        return stop_servers()
    if disabled(argv):
        return None
    try:
        return run_via_server(argv)
    except OSError:
        return None
    except KeyboardInterrupt:  # before the check started
        print(INTERRUPTED, file=sys.stderr, flush=True)
        return 130
