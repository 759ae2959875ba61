"""Killing the measurement's child processes with everything they started, and saying how one ended.

Build workers (tuner/measure/builder.py) and the runner (tuner/measure/runner.py)
each lead their own process group, so killing one also kills the C compiler or
simulator it started, and a Ctrl-C at the terminal reaches only the tuner, which
then stops them itself (a worker interrupted mid-message would only print noise).
"""

from __future__ import annotations

import contextlib
import os
import signal
from multiprocessing.process import BaseProcess

JOIN_SECONDS = 5.0


def lead_own_process_group() -> None:
    """Called first thing in a child: its group is then its pid, and the terminal's Ctrl-C skips it."""
    if hasattr(os, "setpgrp"):
        with contextlib.suppress(OSError):
            os.setpgrp()


def kill(process: BaseProcess) -> None:
    """Kill ``process`` and its process group (when it leads one), and reap it."""
    if process.pid is not None and hasattr(os, "killpg"):
        # A child that has not yet called setpgrp has no group of its own: killpg finds none.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(ValueError):
        if process.is_alive():
            process.kill()
        process.join(JOIN_SECONDS)


def how_it_ended(process: BaseProcess) -> str:
    """``"signal SIGSEGV"``, ``"exit code 3"``, or ``"still running"``, after a short wait for it to end."""
    process.join(JOIN_SECONDS)
    code = process.exitcode
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"
