"""pad_einsum: round an einsum block's iteration space up to multiples of given factors (TVM's
pad_einsum).

A block whose accesses are all plain iterators or constants (an einsum:
``C[i, j] += A[i, k] * B[k, j]``) gets each iterator's extent rounded up to a
multiple of its factor (127 -> 128 for 32), so that later tiling divides evenly.
Each input read through a grown iterator is copied into a zero-padded buffer
``<name>_pad`` by a block before the einsum; the output is computed into
``<name>_pad`` and copied back over the original extents by a block after it.
Growing a reduction iterator is only exact when the extra steps add zero, so the
update must be ``C = C + E`` with ``E`` a product one of whose factors is a padded
input indexed by that iterator (the zero makes the product zero).
"""

from __future__ import annotations

from dataclasses import replace

from tir import (
    Add,
    Block,
    Buffer,
    BufferLoad,
    BufferStore,
    Cast,
    IntImm,
    IterKind,
    Mul,
    PrimExpr,
    Range,
    Var,
    const,
    op,
)
from tir.arith import Analyzer
from tir.buffer import BufferRegion
from tir.functor import substitute_buffers

from .analysis import accesses_of, child_blocks, loads_of, loop_iters
from .cache_stage import spatial_stage
from .errors import ArgumentError, ScheduleError
from .index_maps import BlockArgumentMethods
from .instruction import BlockRV, primitive
from .state import ScheduleState

# ---------------------------------------------------------------- errors


class NotEinsumBlockError(ScheduleError):
    """The block is not a leaf with trivial bindings whose accesses are plain iterators or constants."""


class PaddedReductionError(ScheduleError):
    """A reduction iterator would grow, but its extra steps would not add zero."""


# ---------------------------------------------------------------- analysis


def _factors_of(expr: PrimExpr) -> list[PrimExpr]:
    """The factors of a product tree (looking through casts)."""
    if isinstance(expr, Cast):
        return _factors_of(expr.value)
    if isinstance(expr, Mul):
        return _factors_of(expr.a) + _factors_of(expr.b)
    return [expr]


def _check_reduction(block: Block, grown_reduce: set[Var], padded: set[Buffer]) -> None:
    store = block.body
    update = store.value if isinstance(store, BufferStore) else None
    term = None
    if isinstance(update, Add):
        for acc, rest in ((update.a, update.b), (update.b, update.a)):
            if isinstance(acc, BufferLoad) and acc.buffer is store.buffer:
                term = rest
    for var in grown_reduce:
        zeroed = term is not None and any(
            isinstance(f, BufferLoad) and f.buffer in padded and any(i is var for i in f.indices)
            for f in _factors_of(term)
        )
        if not zeroed:
            raise PaddedReductionError(
                f"can't pad reduction iterator {var.name} of block {block.name!r}: its extra steps must add "
                "zero, so the update must be C = C + (a product with a factor read from an input indexed "
                f"by {var.name}); give it factor 1 or pad only the spatial iterators",
                block,
            )


# ---------------------------------------------------------------- pad_einsum


@primitive()
def pad_einsum(state: ScheduleState, block: Block, padding: list) -> None:
    # Step 1. an einsum block with trivial bindings, and a factor per iterator
    iters = loop_iters(state, block, symbolic=True)
    accesses = [(buffer, indices) for buffer, indices, _ in accesses_of(block)]
    iter_vars = {iv.var for iv in block.iter_vars}
    einsum = all(isinstance(i, IntImm) or i in iter_vars for _, idx in accesses for i in idx)
    if iters is None or child_blocks(block) or not einsum:
        raise NotEinsumBlockError(
            f"can't pad_einsum block {block.name!r}: it must hold no other block, be bound one plain loop "
            "per iterator, and index every buffer by iterators or constants only (an einsum)",
            block,
        )
    if not isinstance(padding, (list, tuple)) or len(padding) != len(block.iter_vars):
        raise ArgumentError(
            f"pad_einsum of block {block.name!r} needs one factor per block iterator "
            f"({len(block.iter_vars)}), got {padding!r}",
            block,
        )
    for f in padding:
        if isinstance(f, bool) or not isinstance(f, int) or f <= 0:
            raise ArgumentError(f"pad_einsum factors must be positive integers, got {padding!r}", block)
    grown = {}
    for iv, f in zip(block.iter_vars, padding):
        extent = iv.dom.extent
        if isinstance(extent, IntImm):
            if -(-extent.value // f) * f != extent.value:
                grown[iv.var] = const(-(-extent.value // f) * f, extent.dtype)
        elif f != 1:  # a dynamic extent n grows to (n + f - 1) // f * f, as in TVM
            grown[iv.var] = op.floordiv(extent + (f - 1), f) * f
    if not grown:
        return

    # Step 2. which buffers grow: those indexed by a grown iterator that may run past their extent
    analyzer = Analyzer()

    def padded_shape(buffer: Buffer, indices) -> tuple[PrimExpr, ...]:
        return tuple(
            grown[i] if i in grown and not analyzer.can_prove(op.ge(d, grown[i])) else d
            for i, d in zip(indices, buffer.shape)
        )

    written = {r.buffer for r in block.writes}
    new_of: dict[Buffer, Buffer] = {}
    for buffer, indices in accesses:
        shape = padded_shape(buffer, indices)
        if buffer not in new_of and any(a is not b for a, b in zip(shape, buffer.shape)):
            new_of[buffer] = Buffer(
                state.unique_name(f"{buffer.name}_pad"), shape, buffer.dtype, buffer.scope
            )
    reads_output = any(loads_of(block.body, b) for b in written if b in new_of)
    if block.init is None and reads_output and any(b in new_of for b in written):
        raise NotEinsumBlockError(
            f"can't pad_einsum block {block.name!r}: it reads the old values of the output it writes "
            "without T.init, which the padded output would not hold",
            block,
        )
    grown_reduce = {iv.var for iv in block.iter_vars if iv.var in grown and iv.kind is IterKind.REDUCE}
    _check_reduction(block, grown_reduce, {old for old in new_of if old not in written})

    # Step 3. the einsum over the grown space, reading and writing the padded buffers
    realize = state.realize_of(block)
    loops = state.loops_of(block)
    new_block = substitute_buffers(block, new_of)
    new_iters = tuple(
        replace(iv, dom=Range(iv.dom.min, grown[iv.var])) if iv.var in grown else iv
        for iv in new_block.iter_vars
    )
    new_block = replace(new_block, iter_vars=new_iters)
    loop_of = {value: iv for iv, value in zip(block.iter_vars, realize.iter_values)}
    state.replace({realize: replace(realize, block=new_block)})
    for loop in loops:
        iv = loop_of[loop.loop_var]
        if iv.var in grown:
            current = state.index.loops[loop.loop_var]
            state.replace({current: replace(current, extent=grown[iv.var])})

    # Step 4. copy inputs into their padded buffers before, the output back after
    for old, new in new_of.items():
        into = old not in written

        def body(vs: list[Var], old=old, new=new, into=into):
            inside = const(True)
            for v, d_old, d_new in zip(vs, old.shape, new.shape):
                if d_old is not d_new:
                    inside = op.logical_and(inside, op.lt(v, d_old))
            point_old = BufferRegion(old, tuple(Range(v, const(1, v.dtype)) for v in vs))
            point_new = BufferRegion(new, tuple(Range(v, const(1, v.dtype)) for v in vs))
            if into:
                value = op.call("if_then_else", inside, BufferLoad(old, tuple(vs)), const(0, old.dtype))
                return BufferStore(new, value, tuple(vs)), (point_old,), (point_new,)
            return BufferStore(old, BufferLoad(new, tuple(vs)), tuple(vs)), (point_new,), (point_old,)

        stage = spatial_stage(state.unique_name(new.name), list(new.shape if into else old.shape), body)
        state.insert_beside(state.index.blocks[block.name], stage, after=not into)
    scope = state.parent_block(state.realize_of(state.index.blocks[block.name]))
    ordered = [new_of[b] for b in new_of if b not in written] + [new_of[b] for b in new_of if b in written]
    state.replace({scope: replace(scope, alloc_buffers=(*scope.alloc_buffers, *ordered))})


# ---------------------------------------------------------------- public methods


class PadEinsumMethods(BlockArgumentMethods):
    def pad_einsum(self, block: BlockRV | str, padding: list[int]) -> None:
        """Round each iterator's extent of an einsum block up to a multiple of its ``padding``
        factor, computing through zero-padded copies of the buffers that grow.

        ``pad_einsum`` in TVM: after it, tiles of the factors divide the loops evenly (for
        tensor cores, say). Inputs read through a grown iterator are copied into
        ``<name>_pad`` (zeros outside) before the block; the output is computed into
        ``<name>_pad`` and copied back over the original extents after it. A dynamic
        extent ``n`` grows to ``(n + f - 1) // f * f``, as in TVM.

        Requirements: the block holds no other block, is bound one plain loop per iterator,
        and indexes every buffer by iterators or constants; one positive factor per
        iterator; a reduction iterator grows only when the update is ``C = C + E`` with a
        factor of the product ``E`` read from an input indexed by it.

        Example
        -------
        >>> sch = Schedule(tir.parse(_MATMUL_127))
        >>> sch.pad_einsum(sch.get_block("C"), [1, 8, 8])
        >>> sch.block_names()
        ['A_pad', 'B_pad', 'C', 'C_pad']
        >>> [int(n) for n in sch.get(sch.get_block("C")).writes[0].buffer.shape]
        [4, 16]
        """
        block = self._block_argument(block)
        return self._run("pad_einsum", block=block, padding=padding)


# The program the example above schedules (doctest globals: tir, Schedule).
_MATMUL_127 = """
@T.prim_func
def main(A: T.Buffer((4, 15), "float32"), B: T.Buffer((15, 13), "float32"), C: T.Buffer((4, 13), "float32")):
    for i, j, k in T.grid(4, 13, 15):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""
