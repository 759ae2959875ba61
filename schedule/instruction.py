"""The registry of schedule primitives and the handles (random variables) they pass.

A primitive is a function ``fn(state, **arguments)`` in its family file
(loop_transformation.py, compute_at.py, ...) that reads nodes, checks what makes
it legal (raising a ``ScheduleError`` subclass) and rewrites ``state``. It gets
nodes, not handles: ``Schedule`` resolves ``LoopRV``/``BlockRV``/``ExprRV`` to
``For``/``Block``/``int`` before the call and turns returned nodes back into
handles after it. Registering with ``@primitive`` makes it traceable and
replayable under its name.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

_counter = itertools.count()


class _RV:
    """A handle. Identity matters; the schedule maps it to a node or a value."""

    __slots__ = ("uid",)
    prefix = "rv"

    def __init__(self):
        self.uid = next(_counter)

    def __repr__(self) -> str:
        return f"{type(self).__name__}#{self.uid}"


class BlockRV(_RV):
    """Handle to a block; stays valid while the block exists (found by name)."""

    __slots__ = ()
    prefix = "b"


class LoopRV(_RV):
    """Handle to a loop; stays valid while the loop exists (found by its variable)."""

    __slots__ = ()
    prefix = "l"


class ExprRV(_RV):
    """Handle to a sampled integer (a tile size, a categorical choice)."""

    __slots__ = ()
    prefix = "v"


@dataclass(frozen=True)
class Sampled:
    """What a sampling primitive returns: its outputs and the decision it took."""

    outputs: object
    decision: object


@dataclass(frozen=True)
class Primitive:
    name: str
    fn: Callable
    sampling: bool = False
    varargs: str | None = None


PRIMITIVES: dict[str, Primitive] = {}


def primitive(sampling: bool = False, varargs: str | None = None) -> Callable:
    """Register a primitive under its function name (``split``, ``compute_at``, ...).

    ``varargs`` names the argument that the public method takes as ``*args``
    (``fuse(*loops)``), so traces print and replay it positionally.
    """

    def register(fn: Callable) -> Callable:
        PRIMITIVES[fn.__name__] = Primitive(fn.__name__, fn, sampling, varargs)
        return fn

    return register
