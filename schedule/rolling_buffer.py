"""rolling_buffer: keep only a sliding window of an intermediate buffer (TVM's rolling_buffer).

After ``compute_at`` a producer runs once per iteration of an outer loop and
writes a window of its buffer, ``B[i_0 * 4 : i_0 * 4 + 6]`` say, that its
consumers in the same iteration read. ``rolling_buffer`` shrinks the first axis
whose window slides with one outer loop to the window's extent and indexes it
modulo that extent (``B[vi % 6]``), so the buffer holds 6 elements instead of 10.
This is exact when the outer loop runs in order and every reader of the buffer,
in each iteration, reads only what the producer just wrote (its window narrowed
by its ``T.where``); both are checked. As TVM, the producer then skips what the
previous iteration of a sliding loop already wrote (``T.where(i_0 < 1 or 2 <= ax0)``:
the 2 rows a 6-row window shares with the one before), on the rolled axis and on any
other axis whose window slides with a serial loop at or inside the rolled one's (an
outer one would find the rows it relies on overwritten), and marks the spatial
iterators that index the rolled axis opaque (their instances now share slots).
Windows that don't overlap are refused, as TVM does: there is nothing to keep.
"""

from __future__ import annotations

from dataclasses import replace

from tir import (
    Block,
    BlockRealize,
    Buffer,
    BufferLoad,
    BufferStore,
    For,
    ForKind,
    IntImm,
    IterKind,
    Mutator,
    Range,
    const,
    op,
)
from tir.analysis.access_bounds import linear_terms
from tir.arith import Analyzer
from tir.buffer import BufferRegion
from tir.functor import collect_vars, stmts_pre_order, substitute

from .analysis import loads_of, loop_domains, relaxed_region
from .cache_write_region import PartialWriteError, written_region
from .errors import ScheduleError
from .index_maps import BlockArgumentMethods, access_region
from .instruction import BlockRV, primitive
from .state import ScheduleState

# ---------------------------------------------------------------- errors


class RollingBufferError(ScheduleError):
    """The buffer can't roll: a parameter, another writer, no loop shared with its readers, no
    sliding axis, a non-serial loop, or a reader outside the window."""


# ---------------------------------------------------------------- rolling_buffer


def _accessors(state: ScheduleState, buffer: Buffer) -> list[Block]:
    return [
        b
        for b in state.index.blocks.values()
        if any(r.buffer is buffer for r in (*b.reads, *b.writes)) and b.name != "root"
    ]


def _shared_loop(state: ScheduleState, blocks: list[Block]) -> For | None:
    """The innermost loop around every block of ``blocks``."""
    chains = [[a for a in state.ancestors(state.realize_of(b)) if isinstance(a, For)] for b in blocks]
    return next((loop for loop in chains[0] if all(any(x is loop for x in c) for c in chains[1:])), None)


def _window(state: ScheduleState, block: Block, region: BufferRegion, loop: For, analyzer: Analyzer):
    realize = state.realize_of(block)
    return relaxed_region(realize, region, loop_domains(state, realize, loop, "global"), analyzer)


@primitive()
def rolling_buffer(state: ScheduleState, block: Block, write_buffer_index: int) -> None:
    # Step 1. an intermediate buffer that only this block writes, read under a loop shared with it
    buffer = access_region(block, "write", write_buffer_index, "write_buffer_index").buffer
    what = f"can't roll buffer {buffer.name} of block {block.name!r}"
    if any(p is buffer for p in state.func.params):
        raise RollingBufferError(f"{what}: it is a parameter of the function", block)
    blocks = _accessors(state, buffer)
    writers = [b for b in blocks if any(w.buffer is buffer for w in b.writes)]
    if writers != [block]:
        raise RollingBufferError(f"{what}: other blocks write it too ({[b.name for b in writers]})", block)
    loop = _shared_loop(state, blocks)
    if loop is None or len(blocks) < 2:
        raise RollingBufferError(
            f"{what}: its readers are not under a loop shared with the block; compute_at the block into "
            "its consumer's loop first",
            block,
        )

    # Step 2. the first axis whose window slides with one serial outer loop
    analyzer = Analyzer()
    outer = [a for a in state.ancestors(loop) if isinstance(a, For)][::-1] + [loop]
    outer_vars = {x.loop_var: x for x in outer}
    for x in outer:
        analyzer.bind(x.loop_var, Range(x.min, x.extent))
    window = _window(state, block, block.writes[write_buffer_index], loop, analyzer)
    candidates = []  # (no overlap, axis, sliding loop): windows that overlap roll first, as TVM's
    for d, (r, size) in enumerate(zip(window, buffer.shape)):
        terms = linear_terms(analyzer.simplify(r.min))
        moving = [v for v in (terms[0] if terms else {}) if v in outer_vars]
        slides = terms is not None and len(moving) == 1 and terms[0][moving[0]] > 0
        shorter = isinstance(r.extent, IntImm) and isinstance(size, IntImm) and r.extent.value < size.value
        if slides and shorter:
            overlap = r.extent.value > terms[0][moving[0]]
            candidates.append((not overlap, d, outer_vars[moving[0]]))
    axis, slider = min(candidates, key=lambda c: c[:2])[1:] if candidates else (None, None)
    if axis is None:
        raise RollingBufferError(
            f"{what}: no axis of the window it writes per iteration of loop {loop.loop_var.name} slides "
            f"with one outer loop and is shorter than the buffer (window: {list(window)})",
            block,
        )
    if all(no_overlap for no_overlap, _, _ in candidates):
        raise RollingBufferError(
            f"{what}: the windows it writes in consecutive iterations of loop {slider.loop_var.name} don't "
            f"overlap (window: {list(window)}), so there is nothing to keep between iterations; "
            "rolling_buffer is for windows that share elements (a 3-tap filter over tiles of 4)",
            block,
        )
    chain = outer[next(i for i, x in enumerate(outer) if x is slider) :]
    if any(x.kind is not ForKind.SERIAL for x in chain):
        raise RollingBufferError(
            f"{what}: the window slides with loop {slider.loop_var.name}, and the loops from it down to "
            f"{loop.loop_var.name} must run in order (serial)",
            block,
        )
    extent = window[axis].extent
    try:  # what the block surely writes per iteration: its T.where narrows the window
        written = written_region(state, block, buffer, loop, exact=True)[axis]
    except PartialWriteError:
        raise RollingBufferError(
            f"{what}: its T.where({state.realize_of(block).predicate}) can't be restated as the part of "
            f"{buffer.name} it writes per iteration, so it can't be checked that readers read only fresh "
            "elements (tile so that the loops divide evenly)",
            block,
        ) from None
    written_low, written_end = written.min, written.min + written.extent

    # Step 3. every reader reads, in each iteration, only what the block just wrote
    for reader in blocks:
        for region in reader.reads:
            if region.buffer is not buffer:
                continue
            r = _window(state, reader, region, loop, analyzer)[axis]
            inside = op.logical_and(op.ge(r.min, written_low), op.le(r.min + r.extent, written_end))
            if not analyzer.can_prove(inside):
                raise RollingBufferError(
                    f"{what}: block {reader.name!r} reads {buffer.name}[{r.min} : {r.min + r.extent}] "
                    f"on axis {axis}, outside [{written_low} : {written_end}], what the block writes in "
                    "the same iteration",
                    block,
                    reader,
                )

    # Step 4. the buffer keeps the window; the rolled axis is indexed modulo its extent
    shape = list(buffer.shape)
    shape[axis] = extent
    rolled = Buffer(buffer.name, tuple(shape), buffer.dtype, buffer.scope)
    opaque = {}
    for b in blocks:
        used = set()
        for load in loads_of(b.body, buffer) + ([] if b.init is None else loads_of(b.init, buffer)):
            used |= collect_vars(load.indices[axis])
        for part in (b.init, b.body):
            for s in stmts_pre_order(part) if part is not None else ():
                if isinstance(s, BufferStore) and s.buffer is buffer:
                    used |= collect_vars(s.indices[axis])
        opaque[b.name] = used
    skip = _skip_recomputed(state, block, block.writes[write_buffer_index], window, outer, slider, analyzer)
    body = _Roll(buffer, rolled, axis, extent, opaque, block, skip).visit(state.func.body)
    state.set_func(replace(state.func, body=body))


def _skip_recomputed(state, block, region, window, outer, rolled_slider, analyzer):
    """``slider < 1 or overlap <= inner`` for each axis whose window slides with a serial loop at or
    inside ``rolled_slider`` by less than its extent and is walked by one inner loop of step 1: the
    instances the previous iteration of that loop already computed (None when no axis qualifies)."""
    realize = state.realize_of(block)
    bindings = {iv.var: value for iv, value in zip(block.iter_vars, realize.iter_values)}
    inside = outer[next(i for i, x in enumerate(outer) if x is rolled_slider) :]
    by_var = {x.loop_var: x for x in inside}
    below = [a for a in state.ancestors(realize) if isinstance(a, For) and all(a is not x for x in outer)]
    inner_loops = {a.loop_var: a for a in below}
    conditions, sliders = [], []
    for d, r in enumerate(window):
        window_terms = linear_terms(analyzer.simplify(r.min))
        moving = [v for v in (window_terms[0] if window_terms else {}) if v in by_var]
        if len(moving) != 1 or not isinstance(r.extent, IntImm) or moving[0] in sliders:
            continue
        slider, stride = by_var[moving[0]], window_terms[0][moving[0]]
        index_terms = linear_terms(analyzer.simplify(substitute(region.region[d].min, bindings)))
        steps = index_terms[0] if index_terms else {}
        walkers = [v for v, k in steps.items() if v in inner_loops and k == 1]
        if not 0 < stride < r.extent.value or len(walkers) != 1:
            continue
        walker = inner_loops[walkers[0]]
        chain = inside[inside.index(slider) :]
        if any(x.kind is not ForKind.SERIAL for x in chain) or not analyzer.can_prove(
            op.logical_and(op.eq(walker.min, 0), op.eq(walker.extent, r.extent))
        ):
            continue
        dtype = slider.loop_var.dtype
        first = op.lt(slider.loop_var, analyzer.simplify(slider.min + const(1, dtype)))
        conditions.append(op.logical_or(first, op.le(const(r.extent.value - stride, dtype), walker.loop_var)))
        sliders.append(slider.loop_var)
    if not conditions:
        return None
    skip = conditions[0]
    for c in conditions[1:]:
        skip = op.logical_and(skip, c)
    return skip


class _Roll(Mutator):
    def __init__(self, old: Buffer, new: Buffer, axis: int, extent, opaque: dict, producer: Block, skip):
        self.old, self.new, self.axis, self.extent, self.opaque = old, new, axis, extent, opaque
        self.producer, self.skip = producer, skip

    def visit_BlockRealize(self, realize: BlockRealize):
        is_producer = realize.block is self.producer
        new = self.generic_visit(realize)
        if not is_producer or self.skip is None:
            return new
        unpredicated = isinstance(new.predicate, IntImm) and bool(new.predicate.value)
        keep = self.skip if unpredicated else op.logical_and(new.predicate, self.skip)
        return replace(new, predicate=keep)

    def _indices(self, indices):
        out = list(indices)
        out[self.axis] = op.floormod(out[self.axis], self.extent)
        return tuple(out)

    def visit_BufferLoad(self, load: BufferLoad):
        load = self.generic_visit(load)
        return BufferLoad(self.new, self._indices(load.indices)) if load.buffer is self.old else load

    def visit_BufferStore(self, store: BufferStore):
        store = self.generic_visit(store)
        if store.buffer is not self.old:
            return store
        return replace(store, buffer=self.new, indices=self._indices(store.indices))

    def _region(self, region: BufferRegion) -> BufferRegion:
        if region.buffer is not self.old:
            return region
        ranges = list(region.region)
        r = ranges[self.axis]
        point = isinstance(r.extent, IntImm) and r.extent.value == 1
        ranges[self.axis] = (
            Range(op.floormod(r.min, self.extent), r.extent)
            if point
            else Range(const(0, r.extent.dtype), self.extent)
        )
        return BufferRegion(self.new, tuple(ranges))

    def visit_Block(self, block: Block):
        new = self.generic_visit(block)
        used = self.opaque.get(block.name, set())
        return replace(
            new,
            iter_vars=tuple(
                replace(iv, kind=IterKind.OPAQUE) if iv.var in used and iv.kind is IterKind.SPATIAL else iv
                for iv in new.iter_vars
            ),
            reads=tuple(self._region(r) for r in new.reads),
            writes=tuple(self._region(r) for r in new.writes),
            alloc_buffers=tuple(self.new if b is self.old else b for b in new.alloc_buffers),
        )


# ---------------------------------------------------------------- public methods


class RollingBufferMethods(BlockArgumentMethods):
    def rolling_buffer(self, block: BlockRV | str, write_buffer_index: int) -> None:
        """Shrink the buffer ``block`` writes at ``write_buffer_index`` to the window one iteration of
        its compute_at loop writes, indexed modulo the window along the axis that slides.

        ``rolling_buffer`` in TVM (Halide's ``fold_storage``). Use it after ``compute_at``
        of a producer into a consumer's tile loop, where consecutive tiles' windows
        overlap (a 3-tap filter over tiles of 4 needs 6 rows per tile).

        Requirements: the buffer is allocated by the function and written by this block
        only; its readers share a loop with the block; one axis's window moves with one
        outer loop, by a positive stride, and is shorter than the buffer; the loops from
        that one down are serial; every reader reads, in each iteration, inside the window.

        Example
        -------
        >>> sch = Schedule(tir.parse(_BLUR))
        >>> j_0, _ = sch.split(sch.get_loops(sch.get_block("C"))[0], [2, 4])
        >>> sch.compute_at(sch.get_block("B"), j_0)
        >>> sch.rolling_buffer(sch.get_block("B"), 0)
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((12,), "float32"), C: T.Buffer((8,), "float32")):
            # with T.block("root"):
            B = T.alloc_buffer((6,))
            for j_0 in range(2):
                for ax0 in range(6):
                    with T.block("B"):
                        vi = T.axis.opaque(10, j_0 * 4 + ax0)
                        T.where(j_0 < 1 or 2 <= ax0)
                        T.reads(A[vi:vi + 3])
                        T.writes(B[vi % 6])
                        B[vi % 6] = A[vi] + A[vi + 1] + A[vi + 2]
                for j_1 in range(4):
                    with T.block("C"):
                        vj = T.axis.opaque(8, j_0 * 4 + j_1)
                        T.reads(B[0:6])
                        T.writes(C[vj])
                        C[vj] = B[vj % 6] + B[(vj + 1) % 6] + B[(vj + 2) % 6]
        """
        block = self._block_argument(block)
        return self._run("rolling_buffer", block=block, write_buffer_index=write_buffer_index)


# The program the example above schedules (doctest globals: tir, Schedule).
_BLUR = """
@T.prim_func
def main(A: T.Buffer((12,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((10,))
    for i in range(10):
        with T.block("B"):
            vi = T.axis.spatial(10, i)
            B[vi] = A[vi] + A[vi + 1] + A[vi + 2]
    for j in range(8):
        with T.block("C"):
            vj = T.axis.spatial(8, j)
            C[vj] = B[vj] + B[vj + 1] + B[vj + 2]
"""
