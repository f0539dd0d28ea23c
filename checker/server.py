"""A warm checker for the command line: one process that keeps the checker's WorkerPool (workers with
torch and triton imported, CUDA started) between `python -m checker` commands.

`python -m checker` starts it in the background after a command it ran itself (checker/run/client.py);
the next command sends it its arguments, folder and environment over a Unix socket, and gets the
report back as it is written, and the exit status. It serves one command at a time (the GPU takes
one at a time anyway); a command that would wait more than client.BUSY_WAIT for another's runs
itself. It exits after client.IDLE_EXIT seconds without a command, when the checker's files change
(their hash is part of its key), or on `python -m checker --stop-server`.

A command runs here as it would in its own process: checker.cli.main with sys.stdout and
sys.stderr sent to the client. A Ctrl-C in the client (or a client that vanishes) is a SIGINT to
this process's main thread while the command runs: the KeyboardInterrupt checker.cli handles
locally, so the check stops, its workers are stopped and the client gets the same one line and
status 130. The idle warm workers stay.
"""
from __future__ import annotations

import argparse
import fcntl
import io
import json
import os
import queue
import select
import signal
import socket
import sys
import threading
import time
import traceback
from pathlib import Path

from checker.run import client

BEAT = 1.0              # seconds between the frames that tell a client the server is alive
HASH_EVERY = 5.0        # seconds between checks, while idle, that the checker's files are unchanged
SEND_TIMEOUT = 60.0     # seconds a client may leave its output unread before it counts as gone
WARM_UP_WAIT = 60.0     # seconds a client waits for the warm-up (a stuck one: the client runs it itself)
THREAD_PREFIX = "checker-server"


class Ticket:
    """One client's command: queued, then served (or given up: 'busy', the client gone)."""

    def __init__(self, conn: socket.socket, request: dict):
        self.conn, self.request = conn, request
        self.state = "queued"          # queued -> started | cancelled (under Server.turn)
        self.started = threading.Event()
        self.done = threading.Event()
        self.interrupted = False
        self.alive = True              # the client still reads
        self.send_lock = threading.Lock()

    def gone(self) -> bool:
        """The client closed its end while it waited (it gave up, or was killed)."""
        try:
            ready, _, _ = select.select([self.conn], [], [], 0)
            return bool(ready) and self.conn.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def send(self, frame: dict) -> bool:
        if not self.alive:
            return False
        data = (json.dumps(frame) + "\n").encode()
        with self.send_lock:
            try:
                self.conn.sendall(data)
                return True
            except KeyboardInterrupt:
                # the interrupt (raised once per command) may have cut this frame short: an empty
                # line ends it, and the client skips both
                try:
                    self.conn.sendall(b"\n")
                except OSError:
                    pass
                raise
            except OSError:
                self.alive = False
                return False


class Output(io.TextIOBase):
    """sys.stdout or sys.stderr of a served command: text to the client, a line at a time (and on
    flush, as a progress line asks)."""

    def __init__(self, ticket: Ticket, name: str, tty: bool):
        super().__init__()
        self.ticket, self.name, self.tty = ticket, name, tty
        self.pending = ""
        self.lock = threading.Lock()

    @property
    def encoding(self) -> str:
        return "utf-8"

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self.tty

    def write(self, text: str) -> int:
        with self.lock:
            self.pending += text
            cut = self.pending.rfind("\n") + 1
            if cut:
                chunk, self.pending = self.pending[:cut], self.pending[cut:]
                self.ticket.send({self.name: chunk})
        return len(text)

    def flush(self) -> None:
        with self.lock:
            if self.pending:
                chunk, self.pending = self.pending, ""
                self.ticket.send({self.name: chunk})


def _lock(path) -> int | None:
    """An exclusive lock on the key's lock file, held for the server's life; None if another server
    holds it. The file is checked to be the one at `path` after locking: a server that exits
    removes it, and a lock on a removed file would guard nothing."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return None
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
            return fd
        os.close(fd)


def _say(message: str) -> None:
    """The server's own log (its stdout is the log file)."""
    sys.__stdout__.write(f"{time.strftime('%H:%M:%S')} {message}\n")
    sys.__stdout__.flush()


class Server:
    def __init__(self, key: str, folder):
        self.key = key
        self.files = client.paths(folder, key)
        self.tickets: queue.Queue = queue.Queue()
        self.stop = threading.Event()
        self.warm = threading.Event()
        self.turn = threading.Lock()      # ticket states, the current ticket
        self.current: Ticket | None = None
        self.running = False              # a command runs in the main thread (an interrupt may land)
        self.raised = False               # this command's KeyboardInterrupt was raised
        self.main = threading.get_ident()
        self.last = time.monotonic()
        self.listener: socket.socket | None = None

    # -- the main thread: warm up, then serve commands one at a time ------------------------------
    def run(self) -> None:
        signal.signal(signal.SIGINT, self._on_interrupt)
        signal.signal(signal.SIGTERM, self._on_terminate)
        path = str(self.files["socket"])
        if os.path.exists(path):
            os.unlink(path)  # a dead server's (we hold the key's lock)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        os.chmod(path, 0o600)
        self.listener.listen(16)
        self.listener.settimeout(BEAT)
        threading.Thread(target=self._accept, name=f"{THREAD_PREFIX}-accept", daemon=True).start()
        _say(f"serving {client.ROOT} on {path}")
        try:
            self._warm_up()
            self.warm.set()
            self.last = time.monotonic()
            self._serve_loop()
        finally:
            self.stop.set()
            self.listener.close()
            for name in ("socket", "lock", "log"):
                try:
                    os.unlink(self.files[name])
                except OSError:
                    pass

    def _warm_up(self) -> None:
        """Start the workers a check needs (torch, triton, CUDA) with a small check: puzzle 1's
        solution, every part, as `python -m checker p01 --solution` would."""
        started = time.monotonic()
        try:
            from checker import registry
            from checker.run.session import run_check
            from checker.source import from_file, from_notebook
            puzzle = registry.get("p01")
            # the student edition has no solution: its notebook's kernels start the workers as well
            source = from_file(puzzle.solution, puzzle.solution.name) if puzzle.solution.is_file() \
                else from_notebook(puzzle.notebook, puzzle.notebook.name)
            self.running = True
            run_check(puzzle, [p.name for p in puzzle.parts], source, write=lambda line: None)
        except KeyboardInterrupt:  # SIGTERM while warming up
            return
        except Exception:
            _say("warm-up failed:\n" + traceback.format_exc())
        finally:
            self.running = False
        _say(f"warm in {time.monotonic() - started:.1f} s")

    def _serve_loop(self) -> None:
        checked = time.monotonic()
        while not self.stop.is_set():
            try:
                try:
                    ticket = self.tickets.get(timeout=BEAT)
                except queue.Empty:
                    now = time.monotonic()
                    if now - self.last > client.IDLE_EXIT:
                        _say("idle: exiting")
                        return
                    if now - checked > HASH_EVERY:
                        checked = now
                        if client.server_key() != self.key:
                            _say("the checker's files changed: exiting")
                            return
                    continue
                with self.turn:
                    if ticket.state != "queued":
                        continue
                    if ticket.gone():
                        ticket.state = "cancelled"
                        continue
                    ticket.state, self.current = "started", ticket
                ticket.started.set()
                self._serve(ticket)
                self.last = time.monotonic()
            except KeyboardInterrupt:  # an interrupt that came as its command ended
                self.last = time.monotonic()

    def _serve(self, ticket: Ticket) -> None:
        request = ticket.request
        ticket.send({"start": True})
        tty = list(request.get("tty") or [False, False]) + [False, False]
        out, err = Output(ticket, "out", bool(tty[0])), Output(ticket, "err", bool(tty[1]))
        saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = out, err
        terminal = {"COLUMNS": os.environ.get("COLUMNS"), "LINES": os.environ.get("LINES")}
        for name, value in zip(terminal, request.get("terminal") or []):
            os.environ[name] = str(value)  # the client's terminal, as shutil.get_terminal_size sees it
        status = 1
        started = time.monotonic()
        try:
            try:
                self.raised, self.running = False, True
                if ticket.interrupted:  # before this command could be interrupted: it is now
                    raise KeyboardInterrupt
                os.chdir(request["cwd"])
                status = _run_cli(list(request["argv"]))
            except KeyboardInterrupt:  # landed outside checker.cli's own handler
                from checker.run.runner import kill_busy_workers
                kill_busy_workers()
                print(client.INTERRUPTED, file=sys.stderr)
                status = 130
            finally:
                self.running = False
            out.flush()
            err.flush()
        finally:
            sys.stdout, sys.stderr = saved
            for name, value in terminal.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            os.chdir(client.ROOT)
        if ticket.interrupted:
            self._after_interrupt()
        # the log's line first: a client that has its status may read the log at once (the tests do)
        _say(f"{' '.join(request['argv'])}: status {status} in {time.monotonic() - started:.1f} s")
        ticket.send({"exit": status})
        with self.turn:
            self.current = None
        ticket.done.set()
        if ticket.interrupted and not self.stop.is_set():
            # its workers were stopped: new ones for the next command (which waits for them)
            self.warm.clear()
            self._warm_up()
            self.warm.set()

    def _after_interrupt(self) -> None:
        """The interrupted command's threads (a check's worker streams) end once its workers are
        stopped; then no request holds the GPU's turn. One that does not end in time: this server
        is not to be trusted with the next command, and exits."""
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline:
            from checker.run.runner import REAPER_THREAD
            others = [t for t in threading.enumerate() if t is not threading.main_thread()
                      and not t.name.startswith((THREAD_PREFIX, REAPER_THREAD))]  # the pool's reaper stays
            if not others:
                from checker.run.runner import POOL
                POOL.reset_turn()
                return
            time.sleep(0.05)
        _say(f"an interrupted check's threads did not end ({', '.join(t.name for t in others)}): exiting")
        self.stop.set()

    def _on_interrupt(self, signum, frame) -> None:
        # runs in the main thread; only the command running now is interrupted, and only once
        if self.running and not self.raised:
            self.raised = True
            raise KeyboardInterrupt

    def _on_terminate(self, signum, frame) -> None:
        self.stop.set()
        self._on_interrupt(signum, frame)

    def interrupt(self, ticket: Ticket) -> None:
        with self.turn:
            if ticket is self.current and not ticket.interrupted:
                ticket.interrupted = True
                signal.pthread_kill(self.main, signal.SIGINT)

    # -- the other threads: accept clients, hold each one's turn and watch it ----------------------
    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except (socket.timeout, BlockingIOError):
                continue
            except OSError:
                return
            threading.Thread(target=self._client, args=(conn,), name=f"{THREAD_PREFIX}-client",
                             daemon=True).start()

    def _client(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(client.ANSWER_TIMEOUT)
            request = json.loads(_read_line(conn))
            conn.settimeout(SEND_TIMEOUT)
            if request.get("op") == "stop":
                _say("asked to stop")
                conn.sendall(b'{"stopping": true}\n')
                self.stop.set()
                return
            if request.get("op") != "run":
                return
            ticket = Ticket(conn, request)
            ticket.send({"hello": os.getpid()})
            if (request.get("key") != self.key or request.get("env") != client.relevant_env()
                    or not os.path.isdir(request.get("cwd", "")) or self.stop.is_set()):
                _say(f"{' '.join(request.get('argv') or [])}: refused (stale), for the client to run")
                ticket.send({"stale": True})
                return
            self.tickets.put(ticket)
            if self._wait_turn(ticket):
                self._watch(ticket)
        except (OSError, ValueError):
            pass
        finally:
            conn.close()

    def _wait_turn(self, ticket: Ticket) -> bool:
        """Wait for the command's turn: as long as the warm-up lasts (WARM_UP_WAIT at most), then at
        most BUSY_WAIT while another client's command runs ('busy': the client runs it itself)."""
        arrived = since = time.monotonic()
        while not ticket.started.wait(BEAT):
            now = time.monotonic()
            if not self.warm.is_set():
                since = now
            give_up = (now - since > client.BUSY_WAIT or now - arrived > WARM_UP_WAIT
                       or not ticket.send({"wait": True}) or self.stop.is_set())
            if give_up:
                with self.turn:
                    if ticket.state == "queued":
                        ticket.state = "cancelled"
                if ticket.state == "cancelled":
                    _say(f"{' '.join(ticket.request.get('argv') or [])}: refused (busy {now - arrived:.0f} s), "
                         "for the client to run")
                    ticket.send({"busy": True})
                    return False
        return True

    def _watch(self, ticket: Ticket) -> None:
        """While the command runs: a beat every second, and an interrupt when the client asks for
        one or goes away (killed, closed)."""
        pending = b""
        while not ticket.done.is_set():
            ready, _, _ = select.select([ticket.conn], [], [], BEAT)
            if ticket.done.is_set():
                break
            if not ready:
                if not ticket.send({"beat": True}):
                    self.interrupt(ticket)
                continue
            try:
                chunk = ticket.conn.recv(4096)
            except OSError:
                chunk = b""
            if not chunk:  # the client is gone: stop its check
                ticket.alive = False
                self.interrupt(ticket)
                ticket.done.wait()
                break
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                if b"interrupt" in line:
                    self.interrupt(ticket)


def _read_line(conn: socket.socket, limit: int = 1 << 20) -> bytes:
    data = b""
    while b"\n" not in data:
        chunk = conn.recv(65536)
        if not chunk or len(data) > limit:
            raise ValueError("no request")
        data += chunk
    return data.split(b"\n", 1)[0]


def _run_cli(argv: list[str]) -> int:
    """checker.cli.main as `python -m checker` runs it: its status, argparse's exits, and a
    traceback for the checker's own bug."""
    from checker import cli
    try:
        return cli.main(argv)
    except SystemExit as exit:
        if exit.code is None or isinstance(exit.code, int):
            return exit.code or 0
        print(exit.code, file=sys.stderr)
        return 1
    except Exception:
        traceback.print_exc()
        return 1


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m checker.server")
    parser.add_argument("--key", required=True)
    parser.add_argument("--dir", required=True)
    args = parser.parse_args()
    files = client.paths(Path(args.dir), args.key)
    if _lock(files["lock"]) is None:
        return  # this key's server is running
    if client.server_key() != args.key:
        _say("the checker's files changed since the command that started this server: not starting")
        os.unlink(files["lock"])
        return
    os.chdir(client.ROOT)
    Server(args.key, Path(args.dir)).run()


if __name__ == "__main__":
    main()
