"""What a cache_write may copy back (cache_read_write.py): exactly the region its writer wrote,
narrowed by predicates and conditions, or a PartialWriteError when that region has gaps or cannot be
restated; copying back more would overwrite elements no block wrote."""

from __future__ import annotations

from tir import (
    Block,
    BlockRealize,
    Buffer,
    For,
    IntImm,
    PrimExpr,
    Range,
    Var,
    const,
    op,
)
from tir.arith import Analyzer, detect_iter_map
from tir.buffer import BufferRegion
from tir.functor import substitute, uses_var

from .analysis import (
    bindings_of,
    guarded_stores,
    loop_domains,
    predicate_bounds,
    relaxed_region,
)
from .errors import ScheduleError
from .state import ScheduleState


class PartialWriteError(ScheduleError):
    """cache_write of a block that writes part of the buffer under a condition the write-back can't
    restate in the buffer's indices, so copying the cache back would write elements nobody wrote."""


def written_region(
    state: ScheduleState, writer: Block, buffer: Buffer, loc, exact: bool = False
) -> tuple[Range, ...]:
    """What ``writer`` writes of ``buffer`` over all its loops below ``loc``; ``exact`` (a write-back
    must not copy what nobody wrote) narrows it by the block's predicate, or refuses."""
    realize = state.realize_of(writer)
    written = next(w for w in writer.writes if w.buffer is buffer)
    high = loc if isinstance(loc, For) else None
    dom = loop_domains(state, realize, high, relax_scope="global")
    analyzer = Analyzer()
    if not exact:
        return relaxed_region(realize, written, dom, analyzer)
    narrowed = predicated_region(realize, written, dom, analyzer)
    if not isinstance(narrowed, tuple):
        raise PartialWriteError(
            f"can't cache_write block {writer.name}: it runs only when {narrowed!r}, which the write-back "
            f"can't restate as a region of {buffer.name}, so copying the cache back would write "
            "elements the block never wrote",
            writer,
        )
    region, dom = narrowed
    check_no_gaps(realize, written, dom)
    return region


def predicated_region(realize: BlockRealize, access: BufferRegion, dom: dict[Var, Range], analyzer: Analyzer):
    """``(region, dom)``: what ``access`` touches over ``dom`` only where the block's predicate
    holds, and the loop domains narrowed by it; the predicate itself when it is not bounds."""
    bounds = predicate_bounds(realize, access, dom, analyzer)
    if not isinstance(bounds, tuple):
        return bounds
    dom, clips = bounds
    region = list(relaxed_region(realize, access, dom, analyzer))
    for axis, (lowest, highest) in clips.items():
        low, last = region[axis].min, analyzer.simplify(region[axis].min + region[axis].extent - 1)
        low = low if lowest is None else analyzer.simplify(op.max_value(low, lowest))
        last = last if highest is None else analyzer.simplify(op.min_value(last, highest))
        region[axis] = Range(low, analyzer.simplify(last - low + 1))
    return tuple(region), dom


def check_no_gaps(realize: BlockRealize, written: BufferRegion, dom: dict[Var, Range]) -> None:
    """Refuse a write that steps over elements (``B[vi * 2]``): the write-back would copy the gaps."""
    binding = bindings_of(realize)
    from_zero = {v: r for v, r in dom.items() if isinstance(r.min, IntImm) and r.min.value == 0}
    for axis, dim in enumerate(written.region):
        index = substitute(dim.min, binding)
        detected = detect_iter_map([index], from_zero)
        stride = detected[0].args[-1].scale if detected is not None and detected[0].args else 1
        if isinstance(dim.extent, IntImm) and stride > dim.extent.value:
            raise PartialWriteError(
                f"can't cache_write block {realize.block.name}: it writes {written.buffer.name} at index "
                f"{dim.min!r} on axis {axis} with stride {stride}, so copying the "
                "cache back would write the elements in between, which no block wrote",
                realize.block,
            )


def written_condition(block: Block, buffer: Buffer) -> tuple[tuple[Var, ...], PrimExpr] | None:
    """When ``block`` writes ``buffer`` under conditions (nested blocks' predicates, ``if``s), the
    condition on an element's indices (placeholder variables, one per axis) under which some store
    writes it; None when every store runs unconditionally."""
    stores = guarded_stores(block, buffer)
    if all(isinstance(s.guard, IntImm) and s.guard.value for s in stores):
        return None
    iterators = {iv.var for iv in block.iter_vars}
    axes = tuple(Var(f"x{axis}", extent.dtype) for axis, extent in enumerate(buffer.shape))
    condition: PrimExpr = const(False)
    for store in stores:
        varying = iterators | store.local_vars
        mapping: dict[Var, PrimExpr] = {}
        at_store = store.guard
        for axis, index in zip(axes, store.indices):
            if isinstance(index, Var) and index in iterators and index not in mapping:
                mapping[index] = axis
            elif not uses_var(index, varying.__contains__):
                at_store = op.logical_and(at_store, op.eq(axis, index))
            else:
                at_store = None
                break
        if at_store is not None:
            at_store = substitute(at_store, mapping)
        if at_store is None or uses_var(at_store, varying.__contains__):
            raise PartialWriteError(
                f"can't cache_write block {block.name}: it writes {buffer.name}"
                f"[{', '.join(repr(i) for i in store.indices)}] only when {store.guard!r}, which the "
                f"write-back can't restate in {buffer.name}'s indices, so copying the cache back would "
                f"write elements no block wrote. Cache the block that holds that store instead",
                block,
            )
        condition = op.logical_or(condition, at_store)
    return axes, condition
