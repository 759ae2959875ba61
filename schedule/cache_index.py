"""cache_index: precompute a block's index expressions into buffers (TVM's cache_index).

A load such as ``A[n, c, vi // 4 + vj // 4, vj // 2]`` recomputes its index
arithmetic at every point. ``cache_index`` moves each distinct non-trivial index
expression of the block's loads (one that is not a plain iterator or constant,
and is made of the block's iterators only) into an int buffer ``index_var_k``,
indexed by the iterators it uses and filled by a block ``index_k`` before the
block's loop nest; the load then reads ``A[n, c, index_var_0[vi, vj],
index_var_1[vj]]``. TVM's ``cse_thresh`` (also caching common sub-expressions
used at least that often) is not implemented: only 0, whole index expressions.
"""

from __future__ import annotations

from dataclasses import replace

from tir import Block, Buffer, BufferLoad, BufferStore, IntImm, Mutator, PrimExpr, Range, Var, Visitor, const
from tir.arith import Analyzer
from tir.buffer import BufferRegion
from tir.functor import collect_vars, substitute
from tir.structural import structural_equal

from .analysis import child_blocks, loads_of
from .cache_stage import checked_scope, spatial_stage
from .errors import ArgumentError, ScheduleError
from .index_maps import BlockArgumentMethods, check_iterators_start_at_zero
from .instruction import BlockRV, primitive
from .state import ScheduleState

# ---------------------------------------------------------------- errors


class CacheIndexBlockError(ScheduleError):
    """The block holds other blocks, whose indices are written in their own iterators."""


# ---------------------------------------------------------------- cache_index


def _index_expressions(block: Block) -> list[PrimExpr]:
    """The distinct non-trivial integer index expressions of the block's loads, in program order."""
    iters = {iv.var for iv in block.iter_vars}
    found: list[PrimExpr] = []

    class _Walk(Visitor):
        def visit_BufferLoad(self, load: BufferLoad) -> None:
            self.generic_visit(load)
            for index in load.indices:
                trivial = isinstance(index, (Var, IntImm)) or not index.dtype.startswith("int")
                if trivial or loads_of(index) or not collect_vars(index) <= iters:
                    continue
                if not any(structural_equal(index, f) for f in found):
                    found.append(index)

    for part in (block.init, block.body):
        if part is not None:
            _Walk().visit(part)
    return found


class _UseCachedIndex(Mutator):
    def __init__(self, cached: list[tuple[PrimExpr, BufferLoad]]):
        self.cached = cached

    def visit_BufferLoad(self, load: BufferLoad):
        load = self.generic_visit(load)
        indices = tuple(
            next((cache for expr, cache in self.cached if structural_equal(index, expr)), index)
            for index in load.indices
        )
        return load if all(a is b for a, b in zip(indices, load.indices)) else replace(load, indices=indices)


@primitive()
def cache_index(state: ScheduleState, block: Block, storage_scope: str, cse_thresh: int = 0) -> list[Block]:
    # Step 1. a leaf block, and the index expressions worth caching
    scope_name = checked_scope(storage_scope, "cache_index")
    if cse_thresh != 0:
        raise ArgumentError(
            f"cache_index caches whole index expressions only (cse_thresh=0); cse_thresh={cse_thresh!r}, "
            "TVM's caching of common sub-expressions, is not implemented",
            block,
        )
    if child_blocks(block):
        raise CacheIndexBlockError(f"can't cache_index block {block.name!r}: it holds other blocks", block)
    expressions = _index_expressions(block)
    if not expressions:
        return []

    # Step 2. one buffer and one filling block per expression, before the block's loop nest
    analyzer = Analyzer()
    for iv in block.iter_vars:
        analyzer.bind(iv.var, iv.dom)
    cached, buffers, names = [], [], []
    for expr in expressions:
        used = [iv for iv in block.iter_vars if iv.var in collect_vars(expr)]
        check_iterators_start_at_zero(used, block)
        buffer = Buffer(
            state.unique_name(f"index_var_{len(buffers)}"),
            tuple(iv.dom.extent for iv in used),
            expr.dtype,
            scope_name,
        )
        cached.append((expr, BufferLoad(buffer, tuple(iv.var for iv in used))))
        buffers.append(buffer)

        def body(iters: list[Var], expr=expr, used=used, buffer=buffer):
            value = substitute(expr, {iv.var: v for iv, v in zip(used, iters)})
            point = BufferRegion(buffer, tuple(Range(v, const(1, v.dtype)) for v in iters))
            return BufferStore(buffer, value, tuple(iters)), (), (point,)

        names.append(state.unique_name(f"index_{len(names)}"))
        stage = spatial_stage(names[-1], [iv.dom.extent for iv in used], body)
        state.insert_beside(state.index.blocks[block.name], stage, after=False)

    # Step 3. the block reads the cached indices
    current = state.index.blocks[block.name]
    extra = tuple(
        BufferRegion(load.buffer, tuple(Range(i, const(1, i.dtype)) for i in load.indices))
        for _, load in cached
    )
    rewritten = replace(_UseCachedIndex(cached).visit(current), reads=(*current.reads, *extra))
    state.replace({current: rewritten})
    scope = state.parent_block(state.realize_of(state.index.blocks[block.name]))
    state.replace({scope: replace(scope, alloc_buffers=(*scope.alloc_buffers, *buffers))})
    return [state.index.blocks[name] for name in names]


# ---------------------------------------------------------------- public methods


class CacheIndexMethods(BlockArgumentMethods):
    def cache_index(self, block: BlockRV | str, storage_scope: str, cse_thresh: int = 0) -> list[BlockRV]:
        """Precompute the index expressions of ``block``'s loads into buffers of ``storage_scope``;
        return the blocks that fill them (none when no index needs computing).

        ``cache_index`` in TVM. Each distinct index expression of the block's iterators that
        is not a plain iterator or constant gets a buffer ``index_var_k`` over the iterators
        it uses, filled by block ``index_k`` before the block's loop nest.

        Requirements: the block holds no other block; ``cse_thresh`` is 0 (TVM's caching of
        common sub-expressions is not implemented).

        Example
        -------
        >>> sch = Schedule(tir.parse(_UPSAMPLE))
        >>> [sch.get(b).name for b in sch.cache_index(sch.get_block("B"), "global")]
        ['index_0']
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((8,), "float32"), B: T.Buffer((16,), "float32")):
            # with T.block("root"):
            index_var_0 = T.alloc_buffer((16,), "int32")
            for ax0 in range(16):
                with T.block("index_0"):
                    v0 = T.axis.spatial(16, ax0)
                    T.reads()
                    T.writes(index_var_0[v0])
                    index_var_0[v0] = v0 // 2
            for i in range(16):
                with T.block("B"):
                    vi = T.axis.spatial(16, i)
                    T.reads(A[vi // 2], index_var_0[vi])
                    T.writes(B[vi])
                    B[vi] = A[index_var_0[vi]]
        """
        block = self._block_argument(block)
        return self._run("cache_index", block=block, storage_scope=storage_scope, cse_thresh=cse_thresh)


# The program the example above schedules (doctest globals: tir, Schedule).
_UPSAMPLE = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi // 2]
"""
