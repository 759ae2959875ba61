"""reorder_block_iter_var and add_unit_loop: rearrange what surrounds a block without changing
the order it runs in (from TVM's loop_transformation family).

``reorder_block_iter_var`` permutes a block's iterators (and their bindings): the
block computes the same instances, only the order of ``T.axis`` lines changes, which
matters to primitives that read iterators by position (tensorize, transform_block_layout).
``add_unit_loop`` wraps a block or a loop in ``for u in range(1)``, so that a block
with no loop gets one to ``compute_at``, ``bind`` or ``blockize`` at.
"""

from __future__ import annotations

from dataclasses import replace

from tir import Block, For, ForKind, Var, const

from .errors import ArgumentError, ScheduleError
from .index_maps import BlockArgumentMethods
from .instruction import BlockRV, LoopRV, primitive
from .state import ScheduleState

# ---------------------------------------------------------------- errors


class IterOrderError(ScheduleError):
    """new_order is not a permutation of the block's iterator positions."""


# ---------------------------------------------------------------- primitives


@primitive()
def reorder_block_iter_var(state: ScheduleState, block: Block, new_order: list) -> None:
    n = len(block.iter_vars)
    valid = isinstance(new_order, (list, tuple)) and all(
        isinstance(p, int) and not isinstance(p, bool) for p in new_order
    )
    if not valid or sorted(new_order) != list(range(n)):
        raise IterOrderError(
            f"can't reorder the iterators of block {block.name!r}: new_order {new_order!r} must be a "
            f"permutation of 0..{n - 1} (the block has {n} iterators: "
            f"{', '.join(iv.var.name for iv in block.iter_vars)})",
            block,
        )
    realize = state.realize_of(block)
    iter_vars = tuple(block.iter_vars[p] for p in new_order)
    values = tuple(realize.iter_values[p] for p in new_order)
    state.replace({realize: replace(realize, iter_values=values, block=replace(block, iter_vars=iter_vars))})


@primitive()
def add_unit_loop(state: ScheduleState, block_or_loop: Block | For) -> For:
    target = state.realize_of(block_or_loop) if isinstance(block_or_loop, Block) else block_or_loop
    if isinstance(block_or_loop, Block) and state.parent(target) is None:
        raise ArgumentError(f"can't add a loop above block {block_or_loop.name!r}: it is the root block")
    var = Var("u", "int32")
    state.replace({target: For(var, const(0), const(1), ForKind.SERIAL, target)})
    return state.index.loops[var]


# ---------------------------------------------------------------- public methods


class BlockIterMethods(BlockArgumentMethods):
    def reorder_block_iter_var(self, block: BlockRV | str, new_order: list[int]) -> None:
        """Put the block's iterators in the order ``new_order`` (positions in the current order).

        ``reorder_block_iter_var`` in TVM. The loops do not move; only the block's
        ``T.axis`` declarations (and their bindings) are permuted.

        Requirements: ``new_order`` is a permutation of ``0 .. number of iterators - 1``.

        Example
        -------
        >>> sch = Schedule(tir.parse(_ROW_SUM))
        >>> sch.reorder_block_iter_var(sch.get_block("B"), [1, 0])
        >>> [iv.var.name for iv in sch.get(sch.get_block("B")).iter_vars]
        ['vk', 'vi']
        """
        block = self._block_argument(block)
        return self._run("reorder_block_iter_var", block=block, new_order=new_order)

    def add_unit_loop(self, block_or_loop: BlockRV | LoopRV) -> LoopRV:
        """Wrap a block or a loop in a new loop ``for u in range(1)`` and return it.

        ``add_unit_loop`` in TVM: a block that no loop surrounds gets one to schedule at.

        Requirements: the block is not the root block.

        Example
        -------
        >>> sch = Schedule(tir.parse(_SCALAR))
        >>> u = sch.add_unit_loop(sch.get_block("B"))
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((1,), "float32"), B: T.Buffer((1,), "float32")):
            # with T.block("root"):
            for u in range(1):
                with T.block("B"):
                    T.reads(A[0])
                    T.writes(B[0])
                    B[0] = A[0] + T.float32(1.0)
        """
        return self._run("add_unit_loop", block_or_loop=block_or_loop)


# The programs the examples above schedule (doctest globals: tir, Schedule).
_ROW_SUM = """
@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 8):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
"""

_SCALAR = """
@T.prim_func
def main(A: T.Buffer((1,), "float32"), B: T.Buffer((1,), "float32")):
    with T.block("B"):
        B[0] = A[0] + T.float32(1)
"""
