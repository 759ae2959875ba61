"""reindex: stage a buffer through a copy laid out by the block's own iterators (TVM's reindex).

A block that reads ``A[vj, vi]`` (a transposed access) or ``Input[n, h * 2 + rh, ...]``
(a convolution window) gets a new buffer ``A_reindex[vi, vj]`` indexed by the block
iterators the access uses, in the block's order; a copy block fills it before the
block (a read) or writes it back after the block (a write), and the block's
accesses become plain ``A_reindex[vi, vj]``. This is the step before
``transform_layout`` or tensorization, which want accesses that are the
iterators themselves. The copy covers the iterators' whole domains, so the block
must be a leaf with one access pattern of the buffer, and a write-back needs the
block to run over its whole domain (no ``T.where``) and to write only through
spatial iterators: a partial write-back would copy elements the block never
wrote (the cache_write bug issue 16 describes).
"""

from __future__ import annotations

from dataclasses import replace

from tir import (
    Block,
    Buffer,
    BufferLoad,
    BufferStore,
    IntImm,
    IterKind,
    Mutator,
    PrimExpr,
    Range,
    Var,
    Visitor,
    const,
)
from tir.arith import Analyzer
from tir.buffer import BufferRegion
from tir.functor import collect_vars, substitute
from tir.structural import structural_equal

from .analysis import child_blocks
from .cache_stage import spatial_stage
from .errors import ScheduleError
from .index_maps import BlockArgumentMethods, buffer_position
from .instruction import BlockRV, primitive
from .state import ScheduleState

# ---------------------------------------------------------------- errors


class ReindexAccessError(ScheduleError):
    """The block accesses the buffer through more than one index pattern, or through none it can
    index by (a constant access), or reads what it writes without ``T.init``."""


class ReindexBlockError(ScheduleError):
    """The block is not a leaf, or (for a write) runs under a predicate or writes through a
    reduction iterator, so a full-domain copy would not match what it does."""


# ---------------------------------------------------------------- analysis


def _accesses(block: Block, buffer: Buffer) -> tuple[list[tuple[PrimExpr, ...]], bool, bool]:
    """The index tuples of every access of ``buffer`` in ``block``, and whether it loads / stores it."""
    found: list[tuple[PrimExpr, ...]] = []
    kinds = {"load": False, "store": False}

    class _Walk(Visitor):
        def visit_BufferLoad(self, load: BufferLoad) -> None:
            if load.buffer is buffer:
                found.append(load.indices)
                kinds["load"] = True
            self.generic_visit(load)

        def visit_BufferStore(self, store: BufferStore) -> None:
            if store.buffer is buffer:
                found.append(store.indices)
                kinds["store"] = True
            self.generic_visit(store)

    _Walk().visit(block.body)
    if block.init is not None:
        _Walk().visit(block.init)
    return found, kinds["load"], kinds["store"]


def _single_pattern(block: Block, buffer: Buffer) -> tuple[PrimExpr, ...]:
    analyzer = Analyzer()
    for iv in block.iter_vars:
        analyzer.bind(iv.var, iv.dom)
    patterns: list[tuple[PrimExpr, ...]] = []
    for indices in _accesses(block, buffer)[0]:
        simplified = tuple(analyzer.simplify(i) for i in indices)
        if not any(structural_equal(simplified, p) for p in patterns):
            patterns.append(simplified)
    if len(patterns) != 1:
        shown = "; ".join(f"{buffer.name}[{', '.join(map(str, p))}]" for p in patterns)
        raise ReindexAccessError(
            f"can't reindex buffer {buffer.name} of block {block.name!r}: it is accessed through "
            f"{len(patterns)} different index patterns ({shown}); reindex needs exactly one",
            block,
        )
    return patterns[0]


# ---------------------------------------------------------------- reindex


@primitive()
def reindex(state: ScheduleState, block: Block, buffer) -> Block:
    # Step 1. a leaf block with one access pattern of the buffer
    kind, index = buffer_position(block, buffer)
    old = (block.reads if kind == "read" else block.writes)[index].buffer
    if child_blocks(block):
        raise ReindexBlockError(f"can't reindex in block {block.name!r}: it holds other blocks", block)
    pattern = _single_pattern(block, old)
    iter_kind = {iv.var: iv.kind for iv in block.iter_vars}
    used_vars = set().union(*(collect_vars(i) for i in pattern))
    used = [iv for iv in block.iter_vars if iv.var in used_vars]
    if not used or any(v not in iter_kind for v in used_vars):
        raise ReindexAccessError(
            f"can't reindex buffer {old.name} of block {block.name!r}: its access "
            f"{old.name}[{', '.join(map(str, pattern))}] must be an expression of the block's iterators "
            "and use at least one",
            block,
        )
    _, loads, stores = _accesses(block, old)
    if kind == "read" and stores:
        raise ReindexAccessError(
            f"can't reindex buffer {old.name} as a read of block {block.name!r}: the block writes it too; "
            f"reindex ('write', n) instead",
            block,
        )
    if kind == "write":
        realize = state.realize_of(block)
        if not (isinstance(realize.predicate, IntImm) and realize.predicate.value == 1):
            raise ReindexBlockError(
                f"can't reindex the write of {old.name} by block {block.name!r}: it runs under "
                f"T.where({realize.predicate}), so the write-back would copy elements it never wrote",
                block,
            )
        if any(iv.kind is not IterKind.SPATIAL for iv in used):
            raise ReindexBlockError(
                f"can't reindex the write of {old.name} by block {block.name!r}: the written index "
                "uses a reduction iterator",
                block,
            )
        if loads and block.init is None:
            raise ReindexAccessError(
                f"can't reindex the write of {old.name} by block {block.name!r}: the block reads the "
                "buffer's old values, which the new buffer would not hold (only a reduction with "
                "T.init may read what it writes)",
                block,
            )

    # Step 2. the new buffer and the block reading or writing it by its iterators
    new = Buffer(state.unique_name(f"{old.name}_reindex"), tuple(iv.dom.extent for iv in used), old.dtype)
    new_indices = tuple(iv.var for iv in used)
    point = BufferRegion(new, tuple(Range(v, const(1, v.dtype)) for v in new_indices))
    rewritten = _Redirect(old, new, new_indices).visit(block)
    rewritten = replace(
        rewritten,
        reads=tuple(point if r.buffer is old else r for r in block.reads),
        writes=tuple(point if r.buffer is old else r for r in block.writes),
    )
    state.replace({block: rewritten})
    scope = state.parent_block(state.realize_of(rewritten))
    state.replace({scope: replace(scope, alloc_buffers=(*scope.alloc_buffers, new))})

    # Step 3. the copy stage over the used iterators' domains
    def body(iters: list[Var]):
        old_idx = tuple(substitute(i, dict(zip(new_indices, iters))) for i in pattern)
        new_idx = tuple(iters)
        old_point = BufferRegion(old, tuple(Range(i, const(1, i.dtype)) for i in old_idx))
        new_point = BufferRegion(new, tuple(Range(i, const(1, i.dtype)) for i in new_idx))
        if kind == "read":
            return BufferStore(new, BufferLoad(old, old_idx), new_idx), (old_point,), (new_point,)
        return BufferStore(old, BufferLoad(new, new_idx), old_idx), (new_point,), (old_point,)

    stage = spatial_stage(new.name, [iv.dom.extent for iv in used], body)
    state.insert_beside(state.index.blocks[block.name], stage, after=kind == "write")
    return state.index.blocks[new.name]


class _Redirect(Mutator):
    """Points every load and store of ``old`` at ``new[indices]``."""

    def __init__(self, old: Buffer, new: Buffer, indices: tuple[PrimExpr, ...]):
        self.old, self.new, self.indices = old, new, indices

    def visit_BufferLoad(self, load: BufferLoad):
        load = self.generic_visit(load)
        return BufferLoad(self.new, self.indices) if load.buffer is self.old else load

    def visit_BufferStore(self, store: BufferStore):
        store = self.generic_visit(store)
        return replace(store, buffer=self.new, indices=self.indices) if store.buffer is self.old else store


# ---------------------------------------------------------------- public methods


class ReindexMethods(BlockArgumentMethods):
    def reindex(self, block: BlockRV | str, buffer: tuple[str, int] | str | Buffer) -> BlockRV:
        """Stage ``buffer`` through a copy indexed by the block's iterators; return the copy block.

        ``reindex`` in TVM. ``buffer`` is ``("read", n)``, ``("write", n)`` or a buffer
        name; ``block`` may be a name. The new buffer ``<name>_reindex`` has one axis
        per block iterator the access uses (in the block's order); a copy block fills
        it before the block (a read) or copies it back after the block (a write).

        Requirements: the block holds no other block and accesses the buffer through
        one index pattern of its iterators; a read is not also written; a write runs
        without ``T.where``, through spatial iterators, and reads the buffer only as a
        reduction with ``T.init``.

        Example
        -------
        >>> sch = Schedule(tir.parse(_TRANSPOSE))
        >>> copy = sch.reindex("B", ("read", 0))
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 4), "float32")):
            # with T.block("root"):
            A_reindex = T.alloc_buffer((8, 4))
            for ax0, ax1 in T.grid(8, 4):
                with T.block("A_reindex"):
                    v0, v1 = T.axis.remap("SS", [ax0, ax1])
                    T.reads(A[v1, v0])
                    T.writes(A_reindex[v0, v1])
                    A_reindex[v0, v1] = A[v1, v0]
            for i, j in T.grid(8, 4):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A_reindex[vi, vj])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A_reindex[vi, vj] * T.float32(2.0)
        """
        block = self._block_argument(block)
        node = self.get(block)
        position = self._prepared("reindex", lambda: buffer_position(node, buffer))
        return self._run("reindex", block=block, buffer=position)


# The program the example above schedules (doctest globals: tir, Schedule).
_TRANSPOSE = """
@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 4), "float32")):
    for i, j in T.grid(8, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vj, vi] * T.float32(2)
"""
