"""Matrix-unit operations: the calls that tensor intrinsics lower to (Metal simdgroup_matrix, CUDA WMMA).

A matrix operation is an ``Evaluate(Call)`` whose arguments are *tiles*: rectangular
regions of the last two dimensions of a buffer, written in scripts as regions,
``T.simdgroup_load(A_frag[0:8, 0:8], A_shared[0:8, 0:8])``. In the IR a tile is the
call ``tir.tile(A[first], A[last])`` of its first and last element, so every pass
that looks at loads (region inference, buffer compaction, the bounds prover) sees the
whole tile as the hull of two points without knowing about matrix units. The
lowering (tir/transform/lower_matrix_fragments.py) turns tiles into a pointer and a
row stride once buffers have their final shapes. Each operation has a *kind* that
says what it computes, which the executor (tir/interpret) runs with serial
semantics and the printers spell per target:

- ``load``  (fragment, source): fragment = source
- ``store`` (fragment, destination): destination = fragment
- ``fill``  (fragment, value): every element = value
- ``mma``   (d, a, b, c): d = a @ b + c

CUDA has two families: WMMA (``wmma_*``, opaque ``wmma::fragment`` objects, 16x16x16)
and ``mma.sync`` m16n8k16 (``mma_*``: "warp" fragments of registers in PTX's layout,
loaded from shared memory with ``ldmatrix``).
"""

from __future__ import annotations

from dataclasses import dataclass

from .arith import Analyzer
from .buffer import Buffer, BufferRegion
from .expr import BufferLoad, Call, IntImm, PrimExpr, Range

TILE = "tir.tile"


@dataclass(frozen=True)
class MatrixOp:
    """One matrix operation: its kind, the target that has it, (rows, cols) per tile argument."""

    name: str
    kind: str  # "load", "store", "fill" or "mma"
    target: str  # "metal" or "cuda"
    shapes: tuple[tuple[int, int], ...]
    # For fragments whose register layout depends on their operand (mma.sync's "warp" scope): the
    # operand ("a", "b", "c") of each tile argument that is a fragment, None for memory.
    roles: tuple[str | None, ...] = ()

    @property
    def arity(self) -> int:
        return 2 if self.kind in ("load", "store", "fill") else 4

    @property
    def tile_positions(self) -> tuple[int, ...]:
        return (0,) if self.kind == "fill" else tuple(range(self.arity))

    @property
    def written_positions(self) -> tuple[int, ...]:
        return (1,) if self.kind == "store" else (0,)


_S8 = (8, 8)
_W16 = (16, 16)
_M168 = (16, 8)
MATRIX_OPS: dict[str, MatrixOp] = {
    op.name: op
    for op in (
        MatrixOp("simdgroup_load", "load", "metal", (_S8, _S8)),
        MatrixOp("simdgroup_store", "store", "metal", (_S8, _S8)),
        MatrixOp("simdgroup_fill", "fill", "metal", (_S8,)),
        MatrixOp("simdgroup_multiply_accumulate", "mma", "metal", (_S8, _S8, _S8, _S8)),
        MatrixOp("wmma_load_matrix_sync", "load", "cuda", (_W16, _W16)),
        MatrixOp("wmma_store_matrix_sync", "store", "cuda", (_W16, _W16)),
        MatrixOp("wmma_fill_fragment", "fill", "cuda", (_W16,)),
        MatrixOp("wmma_mma_sync", "mma", "cuda", (_W16, _W16, _W16, _W16)),
        MatrixOp("mma_ldmatrix_a", "load", "cuda", (_W16, _W16), ("a", None)),
        MatrixOp("mma_ldmatrix_b", "load", "cuda", (_M168, _M168), ("b", None)),
        MatrixOp("mma_fill", "fill", "cuda", (_M168,), ("c",)),
        MatrixOp("mma_store", "store", "cuda", (_M168, _M168), ("c", None)),
        MatrixOp("mma_sync_m16n8k16", "mma", "cuda", (_M168, _W16, _M168, _M168), ("c", "a", "b", "c")),
    )
}


def tile(region: BufferRegion) -> Call:
    """The tile argument for ``region`` (``tir.tile(A[first], A[last])``)."""
    first = tuple(r.min for r in region.region)
    analyzer = Analyzer()
    last = tuple(analyzer.simplify(r.min + r.extent - 1) for r in region.region)
    return Call("handle", TILE, (BufferLoad(region.buffer, first), BufferLoad(region.buffer, last)))


def is_tile(expr: PrimExpr) -> bool:
    return isinstance(expr, Call) and expr.op == TILE


def tile_region(call: Call) -> BufferRegion:
    """The region a tile argument covers."""
    first, last = call.args
    analyzer = Analyzer()
    ranges = tuple(Range(lo, analyzer.simplify(hi - lo + 1)) for lo, hi in zip(first.indices, last.indices))
    return BufferRegion(first.buffer, ranges)


def tile_shape(call: Call) -> tuple[int, int] | None:
    """(rows, cols) of a tile of a buffer of two or more dimensions, or None when not constant
    or when a leading dimension spans more than one index."""
    region = tile_region(call)
    extents = [r.extent.value if isinstance(r.extent, IntImm) else None for r in region.region]
    if len(extents) < 2 or None in extents or any(e != 1 for e in extents[:-2]):
        return None
    return extents[-2], extents[-1]


def matrix_op_of(expr: PrimExpr) -> MatrixOp | None:
    """The matrix operation ``expr`` calls, or None."""
    return MATRIX_OPS.get(expr.op) if isinstance(expr, Call) else None


def make_matrix_call(name: str, args: tuple[PrimExpr, ...]) -> Call:
    """A call of matrix operation ``name``; tile positions take tiles (``tile(region)``)."""
    op = MATRIX_OPS[name]
    if len(args) != op.arity:
        raise TypeError(f"{name} takes {op.arity} arguments, got {len(args)}")
    for position in op.tile_positions:
        if not is_tile(args[position]):
            raise TypeError(f"argument {position} of {name} must be a buffer region such as A[0:8, 0:8]")
    return Call("int32", name, tuple(args))


def written_buffers(call: Call) -> list[Buffer]:
    """Buffers a matrix operation writes."""
    op = MATRIX_OPS[call.op]
    return [call.args[p].args[0].buffer for p in op.written_positions]


def read_arguments(call: Call) -> list[PrimExpr]:
    """The arguments of a matrix operation it reads: all but its destination tiles."""
    written = MATRIX_OPS[call.op].written_positions
    return [arg for position, arg in enumerate(call.args) if position not in written]


def matrix_flops(expr: PrimExpr) -> int:
    """Floating-point operations of one matrix operation (``2 m n k`` for mma, none for the others)."""
    op = matrix_op_of(expr)
    if op is None or op.kind != "mma":
        return 0
    a, b = tile_shape(expr.args[1]), tile_shape(expr.args[2])
    return 2 * a[0] * a[1] * b[1] if a is not None and b is not None else 0
