"""Build the book, one line of progress per page:

    python book/build_book.py          # = jupyter-book build -W -n --keep-going .  (about 4 minutes on 2 cores)

jupyter-book executes every page before it writes any, a few to thirty seconds each, and in a
terminal Sphinx redraws one status line over and over, so a learner watched minutes go by with no
sign of how far it had come (issue 35, item 20). This runs the same command and prints, for each
page, its place in the build, how long it ran and the time so far; the full log goes to
_build/artifacts/build.log, and its warnings and errors to the screen as well. The exit status is
jupyter-book's.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Iterable

ROOT = Path(__file__).resolve().parents[1]
COMMAND = ["jupyter-book", "build", "-W", "-n", "--keep-going", "."]
LOG = ROOT / "_build" / "artifacts" / "build.log"

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
PAGES = re.compile(r"\[new config\] (\d+) added|(\d+) added, \d+ changed")
READING = re.compile(r"^reading sources\.\.\. \[\s*\d+%\] (\S+)")
EXECUTED = re.compile(r": Executed notebook in ([\d.]+) seconds")
WRITING = re.compile(r"^writing output\.\.\. \[\s*\d+%\]")
LOUD = re.compile(r"\b(WARNING|ERROR|CRITICAL)\b|Traceback|^build (succeeded|finished)")


class Progress:
    """Turns jupyter-book's log, a line at a time, into the progress lines a learner reads."""

    def __init__(self, say: Callable[[str], None], clock: Callable[[], float] = time.monotonic):
        self.say, self.clock = say, clock
        self.start = clock()
        self.total: int | None = None
        self.done = 0
        self.page: str | None = None
        self.writing = False

    def _elapsed(self) -> str:
        seconds = int(self.clock() - self.start)
        return f"{seconds // 60}:{seconds % 60:02d}"

    def line(self, raw: str) -> None:
        text = ANSI.sub("", raw).rstrip()
        if self.total is None and (m := PAGES.search(text)):
            self.total = int(m.group(1) or m.group(2))
            self.say(f"{self.total} pages to run, then to write")
        elif m := READING.match(text):
            self.done += 1
            self.page = m.group(1)
            self.say(f"[{self.done:>2}/{self.total or '?'}] {self.page} …")
        elif (m := EXECUTED.search(text)) and self.page:
            self.say(f"[{self.done:>2}/{self.total or '?'}] {self.page}: ran in {float(m.group(1)):.0f} s "
                     f"({self._elapsed()} so far)")
        elif WRITING.match(text) and not self.writing:
            self.writing = True
            self.say(f"writing the HTML pages ({self._elapsed()} so far) …")
        elif LOUD.search(text):
            self.say(text)


def _print(text: str) -> None:
    print(text, flush=True)


def build(lines: Iterable[str] | None = None, say: Callable[[str], None] = _print) -> int:
    """Run the build (or read `lines`, for a test), printing progress; jupyter-book's exit status."""
    progress = Progress(say)
    if lines is not None:
        for line in lines:
            progress.line(line)
        return 0
    LOG.parent.mkdir(parents=True, exist_ok=True)
    with open(LOG, "w", encoding="utf-8") as log:
        # the pages' checks run in each page's own process (checker/notebook.py): a worker per check
        # would import torch again, about half of the build's time on two cores
        env = {**os.environ, "TRITON_PUZZLES_IN_PROCESS": "1"}
        proc = subprocess.Popen(COMMAND, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, errors="replace", bufsize=1, env=env)
        for line in proc.stdout:
            log.write(line)
            progress.line(line)
        status = proc.wait()
    say(f"{'built' if status == 0 else 'the build failed'} in {progress._elapsed()}; "
        f"its log: {LOG.relative_to(ROOT)}; the book: _build/html/index.html")
    return status


if __name__ == "__main__":
    sys.exit(build())
