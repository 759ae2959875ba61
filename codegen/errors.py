"""Errors from building and running kernels.

``BuildError``: the program uses something the target cannot do (a dtype it
lacks, a kernel over a thread or memory limit, a dynamic shape without a size,
a thread tag bound with two extents). It names the construct, the kernel and
how to fix it, and is raised before any compiler runs.
``CompileError``: the downstream compiler (cc, nvcc/NVRTC, Metal) failed
anyway; it shows the compiler's message and the generated source lines it
points at. ``LaunchError``: a kernel failed at run time; in checked builds
(``check_bounds=True``) ``BoundsCheckError`` and ``DivisionCheckError`` say
which access or division of which kernel failed.
"""

from __future__ import annotations

import re


class BuildError(ValueError):
    """The program cannot be built for the target; raised before any compiler runs."""


class LaunchError(RuntimeError):
    """A compiled kernel failed while running (launch failure, simulator deadlock, ...)."""


class BoundsCheckError(LaunchError, IndexError):
    """A checked build (``check_bounds=True``) caught an access outside its buffer; it was skipped."""


class DivisionCheckError(LaunchError, ZeroDivisionError):
    """A checked build (``check_bounds=True``) caught an integer division or modulo by zero."""


_LOCATION = re.compile(r"^(?P<file>[^\s:()]+?)(?::(?P<line>\d+)(?::(?P<col>\d+))?|\((?P<pline>\d+)\))")


class CompileError(RuntimeError):
    """The downstream compiler rejected generated source: its message plus the lines it points at."""

    def __init__(self, tool: str, output: str, source: str, max_locations: int = 3):
        self.tool = tool
        self.output = output.strip()
        self.source = source
        self.lines = _pointed_lines(self.output, source, max_locations)
        super().__init__(self._render())

    def _render(self) -> str:
        text = [f"{self.tool} failed to compile the generated source:", self.output or "(no output)"]
        source_lines = self.source.splitlines()
        for number in self.lines:
            text.append(f"  generated source line {number}: {source_lines[number - 1].strip()}")
        text.append("This is a bug in the code generator if build() accepted the program; please report it.")
        return "\n".join(text)


def _pointed_lines(output: str, source: str, limit: int) -> list[int]:
    """Line numbers (1-based, within ``source``) named by the compiler's ``file:line:col`` messages."""
    count = len(source.splitlines())
    found: list[int] = []
    for message in output.splitlines():
        match = _LOCATION.match(message.strip())
        if not match or "error" not in message.lower():
            continue
        number = int(match.group("line") or match.group("pline") or 0)
        if 1 <= number <= count and number not in found:
            found.append(number)
        if len(found) == limit:
            break
    return found


class RuntimeUnavailableError(ImportError):
    """The target's runtime cannot run here (no GPU, no CuPy, not macOS); the source is still available."""
