"""The registry of schedule primitives and the handles (random variables) they pass.

A primitive is a function ``fn(state, **arguments)`` in its family file
(loop_transformation.py, compute_at.py, ...) that reads nodes, checks what makes
it legal (raising a ``ScheduleError`` subclass) and rewrites ``state``. It gets
nodes, not handles: ``Schedule`` resolves ``LoopRV``/``BlockRV``/``ExprRV`` to
``For``/``Block``/``int`` before the call and turns returned nodes back into
handles after it. Registering with ``@primitive`` makes it traceable and
replayable under its name, and makes its signature the argument check: a
parameter annotated with node types (``Block``, ``For``, ``Block | For``,
``list[For]``, ``... | None``) must get handles of those kinds, which
``Primitive.check_handles`` verifies before the primitive runs, naming the
argument, the kind it needs and what it got.
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

from tir import Block, For

from .errors import ArgumentError, describe

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


# Node types a primitive's parameter annotation may name, and how an error describes their handles.
_NODE_TYPES = {"Block": Block, "For": For}
_HANDLE_WORDS = {
    (Block,): "a block handle (BlockRV, from get_block)",
    (For,): "a loop handle (LoopRV, from get_loops)",
    (Block, For): "a block or loop handle (BlockRV or LoopRV)",
}


@dataclass(frozen=True)
class HandleParameter:
    """A parameter that takes handles: which node types, alone, in a list, or None."""

    name: str
    types: tuple[type, ...]
    single: bool
    listed: bool
    optional: bool

    @staticmethod
    def parse(name: str, annotation) -> HandleParameter | None:
        """The handle parameter an annotation such as ``"Block | list[Block] | None"`` describes, or
        None when it names anything else (an int, a string, no annotation)."""
        if not isinstance(annotation, str):
            return None
        single: list[type] = []
        listed: list[type] = []
        optional = False
        for part in (p.strip() for p in annotation.split("|")):
            inner = part[len("list[") : -1] if part.startswith("list[") and part.endswith("]") else None
            if part == "None":
                optional = True
            elif part in _NODE_TYPES:
                single.append(_NODE_TYPES[part])
            elif inner in _NODE_TYPES:
                listed.append(_NODE_TYPES[inner])
            else:
                return None
        if not single and not listed:
            return None
        types = tuple(t for t in (Block, For) if t in single or t in listed)
        return HandleParameter(name, types, bool(single), bool(listed), optional)

    def check(self, primitive: str, value) -> None:
        """Raise ``ArgumentError`` naming the argument, the kind it needs and what it got."""
        if value is None and self.optional:
            return
        if self.listed and isinstance(value, (list, tuple)):
            for position, item in enumerate(value):
                if not isinstance(item, self.types):
                    raise ArgumentError(
                        f"{primitive} needs {_HANDLE_WORDS[self.types]} for each of {self.name!r}, "
                        f"got {describe(item)} at position {position}",
                        *_marked(item),
                    )
            return
        if not (self.single and isinstance(value, self.types)):
            what = _HANDLE_WORDS[self.types]
            if not self.single:
                what = f"a list of {what.replace('a ', '', 1).replace('handle', 'handles', 1)}"
            elif self.listed:
                what += " or a list of them"
            raise ArgumentError(
                f"{primitive} needs {what} for argument {self.name!r}, got {describe(value)}",
                *_marked(value),
            )


def _marked(value) -> tuple:
    return (value,) if isinstance(value, (Block, For)) else ()


@dataclass(frozen=True)
class Primitive:
    """A registered primitive: its function, whether it samples, its ``*args`` parameter, and
    ``check``, an optional legality analysis ``check(state, **arguments)`` that raises what the
    primitive would raise without rewriting anything (see ``analysis.can_apply``)."""

    name: str
    fn: Callable
    sampling: bool = False
    varargs: str | None = None
    check: Callable | None = None
    handles: tuple[HandleParameter, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        params = inspect.signature(self.fn).parameters.values()
        parsed = (HandleParameter.parse(p.name, p.annotation) for p in params)
        object.__setattr__(self, "handles", tuple(h for h in parsed if h is not None))

    def check_handles(self, arguments: dict) -> None:
        """Check the resolved ``arguments`` against the handle parameters of the signature."""
        for param in self.handles:
            if param.name in arguments:
                param.check(self.name, arguments[param.name])


PRIMITIVES: dict[str, Primitive] = {}


def primitive(sampling: bool = False, varargs: str | None = None, check: Callable | None = None) -> Callable:
    """Register a primitive under its function name (``split``, ``compute_at``, ...).

    ``varargs`` names the argument that the public method takes as ``*args``
    (``fuse(*loops)``), so traces print and replay it positionally. ``check`` is the
    primitive's legality analysis, when it has one that costs less than applying it.
    """

    def register(fn: Callable) -> Callable:
        PRIMITIVES[fn.__name__] = Primitive(fn.__name__, fn, sampling, varargs, check)
        return fn

    return register
