"""The loop nest of a program in a few lines, as Halide's ``print_loop_nest`` shows it.

``show(loops_only=True)`` on a PrimFunc, an IRModule or a Schedule prints this
view: one line per loop (its kind or thread binding, its variable and its
inclusive range) and one line per block that computes, named after the buffer
it writes; the expressions are left out. The full script stays one ``show()``
away. Before (the script): a ``T.grid(16, 16)`` loop nest split into 8x8 tiles
and bound to blockIdx/threadIdx. After::

    blockIdx.y y_0 in [0, 1]:
      blockIdx.x x_0 in [0, 1]:
        threadIdx.y y_1 in [0, 7]:
          threadIdx.x x_1 in [0, 7]:
            brighter(...) = ...
"""

from __future__ import annotations

from .. import Block, BlockRealize, For, ForKind, IfThenElse, SeqStmt, Stmt
from ..expr import IntImm
from ..function import IRModule, PrimFunc

__all__ = ["loop_nest"]

_KIND_WORDS = {
    ForKind.SERIAL: "for",
    ForKind.PARALLEL: "parallel",
    ForKind.VECTORIZED: "vectorized",
    ForKind.UNROLLED: "unrolled",
}


def loop_nest(obj: PrimFunc | IRModule) -> str:
    """The loop-nest text of a function, or of each function of a module under its name."""
    if isinstance(obj, IRModule) and len(obj.functions) == 1:
        (obj,) = obj.functions.values()
    if isinstance(obj, IRModule):
        parts = [f"{name}:\n{_indent(loop_nest(func))}" for name, func in obj.functions.items()]
        return "\n".join(parts)
    lines: list[str] = []
    _walk(obj.body, 0, lines)
    return "\n".join(lines)


def _walk(stmt: Stmt, depth: int, lines: list[str]) -> None:
    pad = "  " * depth
    if isinstance(stmt, SeqStmt):
        for child in stmt.seq:
            _walk(child, depth, lines)
    elif isinstance(stmt, For):
        lines.append(f"{pad}{_loop_word(stmt)} {stmt.loop_var.name} in {_range(stmt)}:")
        _walk(stmt.body, depth + 1, lines)
    elif isinstance(stmt, BlockRealize):
        _walk(stmt.block, depth, lines)
    elif isinstance(stmt, Block):
        _block(stmt, depth, lines)
    elif isinstance(stmt, IfThenElse):
        lines.append(f"{pad}if ...:")
        _walk(stmt.then_case, depth + 1, lines)
        if stmt.else_case is not None:
            lines.append(f"{pad}else:")
            _walk(stmt.else_case, depth + 1, lines)
    elif hasattr(stmt, "body"):  # LetStmt, Allocate
        _walk(stmt.body, depth, lines)
    else:
        lines.append(f"{pad}{_computes(stmt)}(...) = ...")


def _block(block: Block, depth: int, lines: list[str]) -> None:
    """A block that holds loops or blocks is transparent; one that computes is one line."""
    if _holds_loops(block.body):
        _walk(block.body, depth, lines)
        return
    name = block.writes[0].buffer.name if block.writes else block.name
    if block.init is not None:
        lines.append(f"{'  ' * depth}{name}(...) = ...  # init")
    lines.append(f"{'  ' * depth}{name}(...) = ...")


def _holds_loops(stmt: Stmt) -> bool:
    if isinstance(stmt, (For, BlockRealize, Block)):
        return True
    if isinstance(stmt, SeqStmt):
        return any(_holds_loops(child) for child in stmt.seq)
    return isinstance(stmt, IfThenElse) or (hasattr(stmt, "body") and _holds_loops(stmt.body))


def _computes(stmt: Stmt) -> str:
    buffer = getattr(stmt, "buffer", None)
    return buffer.name if buffer is not None else type(stmt).__name__


def _loop_word(loop: For) -> str:
    if loop.kind is ForKind.THREAD_BINDING:
        return loop.thread_tag or "thread"
    return _KIND_WORDS[loop.kind]


def _range(loop: For) -> str:
    if isinstance(loop.min, IntImm) and isinstance(loop.extent, IntImm):
        return f"[{loop.min.value}, {loop.min.value + loop.extent.value - 1}]"
    return f"[{loop.min}, {loop.min} + {loop.extent} - 1]"


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.splitlines())
