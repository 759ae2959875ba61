"""The measurement's child processes: in their own process group, killed with all they started.

Build workers (tuner/measure/builder.py) and the runner (tuner/measure/runner.py)
are each a :class:`Child`: a process running ``entry(conn)`` with a pipe to the
tuner. A worker is forked on Linux (it starts at once, with the tuner's modules
loaded); the runner, and workers elsewhere, are a fresh interpreter started as
``python -c`` with the tuner's ``sys.path``, which (unlike multiprocessing's
spawn) never re-runs the user's main script, so a tuning script needs no
``if __name__ == "__main__"`` guard and a notebook works too. Each child leads
its own process group: killing it also kills the compiler or simulator it
started, and a Ctrl-C at the terminal reaches only the tuner, which then stops
its children itself. On Linux a child is also killed by the kernel when the
tuner dies without stopping it (``kill -9``, a crash).
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import json
import multiprocessing
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from multiprocessing.connection import Connection

JOIN_SECONDS = 5.0
_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
_BOOTSTRAP = (
    "import json, sys\n"
    "sys.path[:0] = json.loads(sys.argv[1])\n"
    f"from {__name__} import run_child\n"
    "run_child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))\n"
)

Entry = Callable[[Connection], None]


class Child:
    """A child process running ``entry(conn)``; ``conn`` is the tuner's end of their pipe.

    ``entry`` must be a module-level function. ``fork=False`` starts a fresh interpreter.
    """

    def __init__(self, entry: Entry, *, fork: bool, name: str):
        parent_end, child_end = multiprocessing.Pipe()
        self._process: multiprocessing.Process | None = None
        self._popen: subprocess.Popen | None = None
        try:
            if fork:
                context = multiprocessing.get_context("fork")
                args = (entry, child_end, parent_end, os.getpid())
                self._process = context.Process(target=_forked_child, args=args, name=name, daemon=True)
                self._process.start()
            else:
                fd = child_end.fileno()
                where = f"{entry.__module__}:{entry.__qualname__}"
                command = [sys.executable, "-c", _BOOTSTRAP, json.dumps(sys.path), where, str(fd)]
                command.append(str(os.getpid()))
                self._popen = subprocess.Popen(command, pass_fds=(fd,), start_new_session=True)
        finally:
            child_end.close()  # the tuner's end reads EOF once the child is gone
        self.conn: Connection = parent_end

    @property
    def pid(self) -> int:
        return (self._process or self._popen).pid

    def is_alive(self) -> bool:
        return self._wait(0) is None

    def kill(self) -> None:
        """Kill the child and its process group, reap it, and close the pipe."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        if self.is_alive():  # a forked child that had not yet made its group
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
        self._wait(JOIN_SECONDS)
        self.conn.close()

    def how_it_ended(self) -> str:
        """``"signal SIGSEGV"``, ``"exit code 3"`` or ``"still running"``, after a short wait for the end."""
        code = self._wait(JOIN_SECONDS)
        if code is None:
            return "still running"
        if code < 0:
            try:
                return f"signal {signal.Signals(-code).name}"
            except ValueError:
                return f"signal {-code}"
        return f"exit code {code}"

    def _wait(self, timeout: float) -> int | None:
        if self._process is not None:
            self._process.join(timeout)
            return self._process.exitcode
        try:
            return self._popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None


def _forked_child(entry: Entry, conn: Connection, tuner_end: Connection, tuner_pid: int) -> None:
    with contextlib.suppress(OSError):
        os.setpgrp()
    tuner_end.close()  # else this child's own copy would keep its pipe open after the tuner dies
    _die_with(tuner_pid)
    entry(conn)


def run_child(where: str, fd: int, tuner_pid: int) -> None:
    """The fresh interpreter's start (see ``_BOOTSTRAP``): run the entry named ``module:function``."""
    _die_with(tuner_pid)
    module, name = where.split(":")
    getattr(importlib.import_module(module), name)(Connection(fd))


def _die_with(tuner_pid: int) -> None:
    """Have the kernel kill this process when the tuner dies (Linux); exit if it already has."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != tuner_pid:
        os._exit(0)
