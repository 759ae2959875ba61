"""fuse_reduction_epilogue: fold an epilogue ``D = temp + C`` into the reduction producing ``temp``
(TVM's fuse_reduction_epilogue).

A reduction ``temp[i, j] = temp[i, j] + A[i, k] * B[k, j]`` followed by an epilogue
block ``D[i, j] = temp[i, j] + C[i, j]`` becomes one block that reduces straight into
``D`` starting from ``C``: ``T.init(): D[i, j] = C[i, j]`` and ``D[i, j] = D[i, j] +
A[i, k] * B[k, j]``; the epilogue's loops go away. It is exact when the epilogue
combines ``temp`` with something else by the reduction's own operator (a bias add
after a sum, a max after a max: ``init op x`` then the same reduction), uses
``temp`` once, at its own iterators, and nothing else reads ``temp``; all checked.
TVM keeps other readers of ``temp`` reading a buffer nobody writes any more; we
refuse that case.
"""

from __future__ import annotations

from dataclasses import replace

from tir import Block, BufferLoad, BufferStore, IntImm, Var
from tir.analysis.block_access import infer_access_regions
from tir.analysis.reducer import combine, match_reducer
from tir.functor import stmts_pre_order, substitute
from tir.structural import structural_equal

from .analysis import child_blocks, loads_of, loop_iters
from .errors import ScheduleError
from .index_maps import BlockArgumentMethods
from .instruction import BlockRV, primitive
from .state import ScheduleState

# ---------------------------------------------------------------- errors


class EpilogueFusionError(ScheduleError):
    """The blocks are not a reduction and an epilogue that combines its result by the same operator,
    once, at the same point, with nothing else reading the intermediate."""


# ---------------------------------------------------------------- fuse_reduction_epilogue


@primitive()
def fuse_reduction_epilogue(state: ScheduleState, reduction_block: Block, epilogue_block: Block) -> None:
    # Step 1. a sum-like reduction into temp, and an epilogue D = temp op X by the same operator
    reduction, epilogue = reduction_block, epilogue_block
    update = reduction.body
    kind, term = match_reducer(update) if isinstance(update, BufferStore) else (None, None)
    init = reduction.init
    fail = f"can't fuse epilogue {epilogue.name!r} into reduction {reduction.name!r}"
    if kind is None or not isinstance(init, BufferStore) or init.buffer is not update.buffer:
        raise EpilogueFusionError(f"{fail}: the reduction must be C = C op x with a T.init of C", reduction)
    temp = update.buffer
    store = epilogue.body
    value = store.value if isinstance(store, BufferStore) else None
    parts = (value.a, value.b) if value is not None and type(value) is kind else ()
    temp_part = [p for p in parts if isinstance(p, BufferLoad) and p.buffer is temp]
    if child_blocks(epilogue) or len(temp_part) != 1 or len(loads_of(value, temp)) != 1:
        raise EpilogueFusionError(
            f"{fail}: the epilogue must be one store D[...] = {temp.name}[...] {kind.__name__.lower()} x "
            f"that reads {temp.name} once, combining by the reduction's operator",
            epilogue,
        )
    rest = parts[1] if parts[0] is temp_part[0] else parts[0]

    # Step 2. the epilogue's iterators are the reduction's spatial ones, in temp's order
    iters = loop_iters(state, epilogue)
    spatial = [iv.var for iv in reduction.iter_vars if any(iv.var is i for i in update.indices)]
    p_vars = [iv.var for iv in epilogue.iter_vars]
    same_point = (
        iters is not None
        and all(isinstance(i, Var) for i in (*update.indices, *temp_part[0].indices))
        and [i for i in temp_part[0].indices] == p_vars
        and len(update.indices) == len(p_vars) == len(spatial)
    )
    if same_point:
        extents = {iv.var: iv.dom.extent for iv in (*reduction.iter_vars, *epilogue.iter_vars)}
        same_point = all(
            structural_equal(extents[a], extents[b]) for a, b in zip(update.indices, temp_part[0].indices)
        )
    if not same_point:
        raise EpilogueFusionError(
            f"{fail}: the epilogue must run over exactly the reduction's output points, reading "
            f"{temp.name} at its own iterators (one plain loop each)",
            epilogue,
        )
    readers = [
        b.name
        for b in state.index.blocks.values()
        if b.name not in (reduction.name, epilogue.name, "root") and any(r.buffer is temp for r in b.reads)
    ]
    if readers or any(p is temp for p in state.func.params):
        raise EpilogueFusionError(
            f"{fail}: {temp.name} is also read by {readers or 'the caller'}, which would read a buffer "
            "nobody writes any more",
            reduction,
        )
    _check_nothing_between(state, reduction, epilogue, store.buffer, rest, fail)

    # Step 3. the reduction reduces into D from init op X; the epilogue's loops go
    to_reduction = dict(zip(p_vars, update.indices))
    out = tuple(substitute(i, to_reduction) for i in store.indices)
    start = combine(kind, init.value, substitute(rest, to_reduction))
    body = BufferStore(store.buffer, combine(kind, BufferLoad(store.buffer, out), term), out)
    fused = replace(reduction, init=BufferStore(store.buffer, start, out), body=body)
    reads, writes = infer_access_regions(fused)
    fused = replace(fused, reads=reads, writes=writes)
    loops = state.loops_of(epilogue)
    top = loops[0] if loops else state.realize_of(epilogue)
    state.replace({reduction: fused, top: None})


def _check_nothing_between(state: ScheduleState, reduction: Block, epilogue: Block, out, rest, fail: str):
    """X is read, and D written, earlier than before: no statement between the two may write X's
    buffers or touch D."""
    scope = state.parent_block(state.realize_of(reduction))
    order = [s for s in stmts_pre_order(scope.body) if isinstance(s, Block)]
    names = [b.name for b in order]
    if epilogue.name not in names or names.index(epilogue.name) < names.index(reduction.name):
        raise EpilogueFusionError(
            f"{fail}: the epilogue must come after the reduction in one scope", epilogue
        )
    x_buffers = {load.buffer for load in loads_of(rest)}
    for b in order[names.index(reduction.name) + 1 : names.index(epilogue.name)]:
        written = {w.buffer for w in b.writes}
        touched = written | {r.buffer for r in b.reads}
        if written & x_buffers or out in touched:
            raise EpilogueFusionError(
                f"{fail}: block {b.name!r} between them writes what the epilogue reads or touches {out.name}",
                b,
            )
    if loop_iters(state, epilogue) is None or any(
        not (isinstance(x.extent, IntImm)) for x in state.loops_of(epilogue)
    ):
        raise EpilogueFusionError(f"{fail}: the epilogue's loops must be plain loops", epilogue)


# ---------------------------------------------------------------- public methods


class FuseEpilogueMethods(BlockArgumentMethods):
    def fuse_reduction_epilogue(self, reduction_block: BlockRV | str, epilogue_block: BlockRV | str) -> None:
        """Fold an epilogue that combines a reduction's result with something (a bias add) into the
        reduction, which then starts from that something and writes the epilogue's output.

        ``fuse_reduction_epilogue`` in TVM. Blocks may be given by name.

        Requirements: the reduction is ``C = C op x`` with a ``T.init``; the epilogue is one
        store ``D[...] = C[...] op y`` by the same operator, reading ``C`` once at its own
        iterators, over exactly the reduction's output points with one plain loop per
        iterator; nothing else reads ``C``; no block between them writes what ``y`` reads or
        touches ``D``.

        Example
        -------
        >>> sch = Schedule(tir.parse(_ROW_SUM_BIAS))
        >>> sch.fuse_reduction_epilogue("sum", "add")
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4,), "float32"), D: T.Buffer((4,), "float32")):
            # with T.block("root"):
            temp = T.alloc_buffer((4,))
            for i, k in T.grid(4, 8):
                with T.block("sum"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    T.reads(C[vi], A[vi, vk])
                    T.writes(D[vi])
                    with T.init():
                        D[vi] = C[vi]
                    D[vi] = D[vi] + A[vi, vk]
        """
        reduction = self._block_argument(reduction_block)
        epilogue = self._block_argument(epilogue_block)
        return self._run("fuse_reduction_epilogue", reduction_block=reduction, epilogue_block=epilogue)


# The program the example above schedules (doctest globals: tir, Schedule).
_ROW_SUM_BIAS = """
@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4,), "float32"), D: T.Buffer((4,), "float32")):
    temp = T.alloc_buffer((4,))
    for i, k in T.grid(4, 8):
        with T.block("sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                temp[vi] = T.float32(0)
            temp[vi] = temp[vi] + A[vi, vk]
    for i in range(4):
        with T.block("add"):
            vi = T.axis.spatial(4, i)
            D[vi] = temp[vi] + C[vi]
"""
