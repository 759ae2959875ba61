"""decompose_padding: split a padding block into a constant fill and an in-bounds copy (TVM's
decompose_padding).

A block that writes ``B[idx] = T.if_then_else(cond, A[...], pad)`` (``pad`` loads
nothing) becomes two: ``<block>_pad_const`` writes ``pad`` everywhere, in a copy of
the loops from ``loop`` down to the block placed right before ``loop``; the block
itself then writes ``A[...]`` under ``T.where(cond)``. The fill can then be hoisted
or vectorized apart from the copy, which no longer evaluates the condition per
element in its body. TVM also narrows the copy's loops to the in-bounds range; we
keep them and guard with the predicate, which computes the same values.
"""

from __future__ import annotations

from dataclasses import replace

from tir import (
    Block,
    BlockRealize,
    BufferStore,
    Call,
    For,
    IterKind,
    PrimExpr,
    Select,
    Var,
    op,
)
from tir.arith import Analyzer
from tir.functor import substitute
from tir.stmt import seq

from .analysis import bindings_of, child_blocks, loads_of
from .errors import ScheduleError
from .index_maps import BlockArgumentMethods
from .instruction import BlockRV, LoopRV, primitive
from .state import ScheduleState

# ---------------------------------------------------------------- errors


class NotPaddingBlockError(ScheduleError):
    """The block is not one spatial store of a choice between a loaded value and a constant pad."""


class LoopNotAboveBlockError(ScheduleError):
    """The loop is not one of the loops around the block."""


# ---------------------------------------------------------------- decompose_padding


def _padding_parts(block: Block) -> tuple[BufferStore, PrimExpr, PrimExpr, PrimExpr]:
    """``(store, in_bounds_condition, value, pad)`` of a padding block, or NotPaddingBlockError."""
    store = block.body
    choice = store.value if isinstance(store, BufferStore) else None
    if isinstance(choice, Call) and choice.op == "if_then_else":
        cond, then, other = choice.args
    elif isinstance(choice, Select):
        cond, then, other = choice.condition, choice.true_value, choice.false_value
    else:
        cond = None
    ok = (
        cond is not None
        and block.init is None
        and not child_blocks(block)
        and all(iv.kind is IterKind.SPATIAL for iv in block.iter_vars)
        and bool(loads_of(then)) != bool(loads_of(other))
    )
    if not ok:
        raise NotPaddingBlockError(
            f"can't decompose_padding block {block.name!r}: it must be a spatial block whose body is one "
            "store B[...] = T.if_then_else(condition, value, pad) where one branch (the pad) loads "
            "nothing",
            block,
        )
    if bool(loads_of(then)):
        return store, cond, then, other
    return store, op.logical_not(cond), other, then


@primitive()
def decompose_padding(state: ScheduleState, block: Block, loop: For) -> Block:
    # Step 1. a padding block, and a loop around it
    store, in_bounds, value, pad = _padding_parts(block)
    loops = state.loops_of(block)
    if not any(candidate is loop for candidate in loops):
        raise LoopNotAboveBlockError(
            f"can't decompose_padding block {block.name!r} at loop {loop.loop_var.name}: the loop is not "
            f"one of the loops around the block ({', '.join(x.loop_var.name for x in loops) or 'none'})",
            block,
            loop,
        )
    realize = state.realize_of(block)
    chain = loops[next(i for i, x in enumerate(loops) if x is loop) :]
    domains = Analyzer()
    for iv in block.iter_vars:
        domains.bind(iv.var, iv.dom)
    if domains.can_prove(in_bounds):
        raise NotPaddingBlockError(
            f"can't decompose_padding block {block.name!r}: its condition {in_bounds!r} holds on its whole "
            "domain, so there is no padding to fill (TVM refuses a trivial padding too)",
            block,
        )

    # Step 2. the constant fill: the loops from `loop` down to the block, copied, around a pad store
    fresh = {x.loop_var: Var(x.loop_var.name, x.loop_var.dtype) for x in chain}
    iters = {iv.var: Var(iv.var.name, iv.var.dtype) for iv in block.iter_vars}
    fill_store = BufferStore(
        store.buffer, substitute(pad, iters), tuple(substitute(i, iters) for i in store.indices)
    )
    fill_block = replace(
        block,
        name=state.unique_name(f"{block.name}_pad_const"),
        iter_vars=tuple(replace(iv, var=iters[iv.var]) for iv in block.iter_vars),
        reads=(),
        writes=tuple(substitute(w, iters) for w in block.writes if w.buffer is store.buffer),
        body=fill_store,
    )
    fill: object = BlockRealize(
        tuple(substitute(v, fresh) for v in realize.iter_values),
        substitute(realize.predicate, fresh),
        fill_block,
    )
    for x in reversed(chain):
        fill = replace(x, loop_var=fresh[x.loop_var], body=fill)

    # Step 3. the block copies only in bounds: its condition becomes a predicate on the loops
    analyzer = Analyzer()
    guard = analyzer.simplify(op.logical_and(realize.predicate, substitute(in_bounds, bindings_of(realize))))
    copy_block = replace(block, body=replace(store, value=value))
    state.replace({realize: replace(realize, predicate=guard, block=copy_block)})
    moved = state.index.loops[loop.loop_var]
    state.replace({moved: seq(fill, moved)})
    return state.index.blocks[fill_block.name]


# ---------------------------------------------------------------- public methods


class DecomposePaddingMethods(BlockArgumentMethods):
    def decompose_padding(self, block: BlockRV | str, loop: LoopRV) -> BlockRV:
        """Split a padding block into a fill of the pad value and a copy of the in-bounds values;
        return the fill block.

        ``decompose_padding`` in TVM. The fill ``<block>_pad_const`` runs over a copy of the
        loops from ``loop`` down to the block, placed right before ``loop``; the block keeps
        its loops and copies only where the padding condition holds (``T.where``).

        Requirements: the block is spatial, holds no other block, and its body is one store
        ``B[...] = T.if_then_else(condition, value, pad)`` (or ``T.Select``) where exactly one
        branch, the pad, loads nothing, and the condition fails somewhere in the block's
        domain (else there is nothing to pad); ``loop`` is one of the loops around it.
        ``can_decompose_padding(block, loop)`` asks without applying.

        Example
        -------
        >>> sch = Schedule(tir.parse(_PAD))
        >>> block = sch.get_block("P")
        >>> fill = sch.decompose_padding(block, sch.get_loops(block)[0])
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((6,), "float32"), P: T.Buffer((10,), "float32")):
            # with T.block("root"):
            for i in range(10):
                with T.block("P_pad_const"):
                    vi = T.axis.spatial(10, i)
                    T.reads()
                    T.writes(P[vi])
                    P[vi] = T.float32(0.0)
            for i_1 in range(10):
                with T.block("P"):
                    vi_1 = T.axis.spatial(10, i_1)
                    T.where(2 <= i_1 and i_1 < 8)
                    T.reads(A[vi_1 - 2])
                    T.writes(P[vi_1])
                    P[vi_1] = A[vi_1 - 2]
        """
        block = self._block_argument(block)
        return self._run("decompose_padding", block=block, loop=loop)

    def can_decompose_padding(self, block: BlockRV | str, loop: LoopRV) -> bool:
        """Whether ``decompose_padding(block, loop)`` would apply now; changes and records nothing.
        TVM's name for ``can_apply("decompose_padding", ...)``."""
        block = self.find_block(block) if isinstance(block, str) else block
        return self.can_apply("decompose_padding", block=block, loop=loop)


# The program the example above schedules (doctest globals: tir, Schedule).
_PAD = """
@T.prim_func
def main(A: T.Buffer((6,), "float32"), P: T.Buffer((10,), "float32")):
    for i in range(10):
        with T.block("P"):
            vi = T.axis.spatial(10, i)
            P[vi] = T.if_then_else(2 <= vi and vi < 8, A[vi - 2], T.float32(0))
"""
