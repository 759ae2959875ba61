"""Statement nodes: loops, blocks, stores, control flow, allocations.

TensorIR programs are nests of ``For`` loops around ``BlockRealize`` nodes; a
``Block`` names a computation, its iterators (spatial or reduction), the regions
it reads and writes, an optional ``init`` run at the first reduction step, and
the buffers it allocates. Lowering removes blocks and leaves plain loops,
``Allocate``, ``IfThenElse`` and stores for the printers.
"""

from __future__ import annotations

from dataclasses import field
from enum import Enum

from .buffer import Buffer, BufferRegion
from .expr import IterVar, PrimExpr, Var, node


class Stmt:
    __slots__ = ()

    def script(self) -> str:
        from .script.printer import stmt_to_str

        return stmt_to_str(self)

    def __repr__(self) -> str:
        return self.script()

    def same_as(self, other) -> bool:
        """TVM's reference equality: the very same node (``structural_equal`` compares contents)."""
        return self is other


class ForKind(Enum):
    SERIAL = "serial"
    PARALLEL = "parallel"
    VECTORIZED = "vectorized"
    UNROLLED = "unroll"
    THREAD_BINDING = "thread_binding"


THREAD_TAGS = (
    "blockIdx.x",
    "blockIdx.y",
    "blockIdx.z",
    "threadIdx.x",
    "threadIdx.y",
    "threadIdx.z",
    "vthread",
    "vthread.x",
    "vthread.y",
    "vthread.z",
)


@node
class BufferStore(Stmt):
    buffer: Buffer
    value: PrimExpr
    indices: tuple[PrimExpr, ...]


@node
class Evaluate(Stmt):
    value: PrimExpr


@node
class SeqStmt(Stmt):
    seq: tuple[Stmt, ...]

    def __getitem__(self, index: int) -> Stmt:
        """TVM's ``seq_stmt[i]``: the i-th statement."""
        return self.seq[index]


@node
class IfThenElse(Stmt):
    condition: PrimExpr
    then_case: Stmt
    else_case: Stmt | None = None


@node
class LetStmt(Stmt):
    var: Var
    value: PrimExpr
    body: Stmt


@node
class For(Stmt):
    """``for loop_var in range(min, min + extent)``, of a kind; thread loops carry a tag."""

    loop_var: Var
    min: PrimExpr
    extent: PrimExpr
    kind: ForKind
    body: Stmt
    thread_tag: str | None = None
    annotations: dict = field(default_factory=dict)

    @property
    def thread_binding(self) -> For | None:
        """TVM's ``For.thread_binding``: None for a loop bound to no thread; for a bound loop, the
        loop itself, whose ``thread_tag`` names the thread (TVM gives an IterVar with that tag)."""
        return self if self.thread_tag is not None else None


@node
class Allocate(Stmt):
    """Storage for ``buffer`` (its scope says where) live during ``body`` (lowered IR)."""

    buffer: Buffer
    body: Stmt


@node
class Block(Stmt):
    name: str
    iter_vars: tuple[IterVar, ...]
    reads: tuple[BufferRegion, ...]
    writes: tuple[BufferRegion, ...]
    body: Stmt
    init: Stmt | None = None
    alloc_buffers: tuple[Buffer, ...] = ()
    annotations: dict = field(default_factory=dict)

    @property
    def name_hint(self) -> str:
        """TVM's spelling of ``name`` (block names are hints there: they take no part in equality)."""
        return self.name


@node
class BlockRealize(Stmt):
    """A block instance: the values bound to its iterators and a predicate (``T.where``)."""

    iter_values: tuple[PrimExpr, ...]
    predicate: PrimExpr
    block: Block


def seq(*stmts: Stmt | None) -> Stmt:
    """Make a sequence, flattening nested sequences and dropping Nones."""
    flat: list[Stmt] = []
    for s in stmts:
        if s is None:
            continue
        if isinstance(s, SeqStmt):
            flat.extend(s.seq)
        else:
            flat.append(s)
    if len(flat) == 1:
        return flat[0]
    return SeqStmt(tuple(flat))
