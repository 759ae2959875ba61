"""What the primitives that take a buffer argument share, and what the layout-changing ones
(layout_transformation.py, reindex.py) share besides: TVM's buffer argument (an index into a
block's reads or writes, ``("read", n)``, ``("write", n)`` or a name), checked in one place for
every primitive, index maps given as lambdas, IndexMaps or trace text, whether a map is an affine
bijection onto a box and its inverse, and the method-level handling of a block given by name.
"""

from __future__ import annotations

from collections.abc import Callable

from tir import Block, Buffer, BufferRegion, IndexMap, IndexMapError, IntImm, PrimExpr, Range, Var, const, op
from tir.arith.iter_map import IterSumExpr, detect_iter_map

from .errors import ArgumentError, ScheduleError
from .instruction import BlockRV

# ---------------------------------------------------------------- errors


class BufferIndexError(ScheduleError):
    """The buffer argument names nothing the block reads or writes: an index outside its reads or
    writes (TVM's BufferIndexOutOfRangeError), or a name or Buffer it does not access."""


class IndexMapNotApplicableError(ScheduleError):
    """The index map takes the wrong number of indices or is not an affine bijection."""


# ---------------------------------------------------------------- arguments


def region_list(regions: tuple[BufferRegion, ...]) -> str:
    """``[0] A[0:16, 0:16], [1] B[...]``: the regions as an error message lists them."""
    return ", ".join(f"[{i}] {r!r}" for i, r in enumerate(regions)) or "nothing"


def access_index(block: Block, kind: str, index, argument: str = "buffer_index"):
    """``index`` itself, or, for a buffer's name (TVM takes either), its position in the block's
    reads (``kind`` "read") or writes."""
    if not isinstance(index, str):
        return index
    regions = block.reads if kind == "read" else block.writes
    names = [r.buffer.name for r in regions]
    if index not in names:
        raise BufferIndexError(
            f"{argument} {index!r}: block {block.name!r} {kind}s no buffer of that name; it {kind}s "
            f"{region_list(regions)}",
            block,
        )
    return names.index(index)


def access_region(block: Block, kind: str, index, argument: str = "buffer_index") -> BufferRegion:
    """``block.reads[index]`` (``kind`` "read") or ``block.writes[index]`` (``kind`` "write"): the
    check of TVM's buffer-index argument (named ``argument`` in the error) that every primitive
    taking one shares: ArgumentError when it is not an int (or a name of one of those buffers),
    BufferIndexError when it is out of range."""
    if kind not in ("read", "write"):
        raise BufferIndexError(f"buffer_index_type must be 'read' or 'write', got {kind!r}", block)
    regions = block.reads if kind == "read" else block.writes
    index = access_index(block, kind, index, argument)
    if isinstance(index, bool) or not isinstance(index, int):
        raise ArgumentError(
            f"{argument} must be an int indexing what block {block.name!r} {kind}s, got {index!r}", block
        )
    if not 0 <= index < len(regions):
        raise BufferIndexError(
            f"{argument} {index} is out of range: block {block.name!r} {kind}s {len(regions)} buffer(s): "
            f"{region_list(regions)}. Pick an index from that list",
            block,
        )
    return regions[index]


def buffer_position(block: Block, buffer, argument: str = "buffer") -> tuple[str, int]:
    """``("read" | "write", index)`` for TVM's buffer argument: such a pair, a name, or a Buffer.

    A buffer both read and written (an accumulator) is found among the writes."""
    if isinstance(buffer, (tuple, list)) and len(buffer) == 2 and buffer[0] in ("read", "write"):
        kind, index = buffer
        access_region(block, kind, index, argument)
        return kind, index
    for kind, regions in (("write", block.writes), ("read", block.reads)):
        for index, region in enumerate(regions):
            if region.buffer is buffer or region.buffer.name == buffer:
                return kind, index
    name = buffer.name if isinstance(buffer, Buffer) else buffer
    accessed = [r.buffer.name for r in (*block.reads, *block.writes)]
    raise BufferIndexError(
        f"block {block.name!r} neither reads nor writes buffer {name!r} (it accesses {accessed}); "
        "pass ('read', n), ('write', n) or the name of one of those",
        block,
    )


def buffer_at(block: Block, position) -> Buffer:
    kind, index = buffer_position(block, position)
    return (block.reads if kind == "read" else block.writes)[index].buffer


def as_index_map(index_map, ndim: int, dtype: str, where: Block) -> IndexMap:
    """An ``IndexMap`` of ``ndim`` inputs from a map, a Python function or the text a trace stores."""
    try:
        if isinstance(index_map, str):
            index_map = IndexMap.parse(index_map, dtype)
        elif not isinstance(index_map, IndexMap):
            if not callable(index_map):
                raise IndexMapError(f"an index map is a function of the indices, got {index_map!r}")
            index_map = IndexMap.from_func(index_map, ndim, dtype)
    except IndexMapError as err:
        raise IndexMapNotApplicableError(str(err), where) from err
    if len(index_map.initial_indices) != ndim:
        raise IndexMapNotApplicableError(
            f"index map {index_map} takes {len(index_map.initial_indices)} indices, but {ndim} are mapped",
            where,
        )
    return index_map


# ---------------------------------------------------------------- bijections


def static_extents(shape, what: str, where: Block) -> list[int]:
    extents = []
    for extent in shape:
        if not isinstance(extent, IntImm):
            raise IndexMapNotApplicableError(
                f"{what} has the symbolic extent {extent}; only constant extents are supported", where
            )
        extents.append(extent.value)
    return extents


class IteratorOffsetError(ScheduleError):
    """A block iterator whose domain does not start at 0 (loop_partition makes them)."""


def check_iterators_start_at_zero(iter_vars, where: Block) -> None:
    """Raise IteratorOffsetError for the first of ``iter_vars`` whose domain does not start at 0:
    a buffer sized by the iterators' extents and indexed by the iterators would be overrun."""
    for iv in iter_vars:
        if not (isinstance(iv.dom.min, IntImm) and iv.dom.min.value == 0):
            raise IteratorOffsetError(
                f"block iterator {iv.var.name} runs over [{iv.dom.min}, {iv.dom.min} + "
                f"{iv.dom.extent}), not from 0; a buffer indexed by it would need {iv.dom.min} unused "
                "elements first. Apply this primitive before loop_partition, or to a block whose "
                "iterators start at 0",
                where,
            )


def bijection(index_map: IndexMap, extents: list[int], where: Block) -> list[IterSumExpr] | None:
    """The map's outputs as disjoint pieces of its inputs when it is a bijection onto a box."""
    dom = {v: Range(const(0, v.dtype), const(n, v.dtype)) for v, n in zip(index_map.initial_indices, extents)}
    sums = detect_iter_map(index_map.final_indices, dom, check_bijective=True)
    if sums is None:
        return None
    for s in sums:
        if not (isinstance(s.base, IntImm) and s.base.value == 0):
            raise IndexMapNotApplicableError(
                f"index map {index_map} adds the constant offset {s.base} to an output; a layout "
                "starts at 0, so drop the offset",
                where,
            )
        if not all(isinstance(a.source.source, Var) and a.extent is not None for a in s.args):
            raise IndexMapNotApplicableError(
                f"index map {index_map} splits a fused index; write it with one input per piece", where
            )
    return sums


def inverse_of(index_map: IndexMap, sums: list[IterSumExpr], outputs: list[Var]) -> dict[Var, PrimExpr]:
    """Each input of the map as an expression of its outputs (the map must be a bijection)."""
    inverse: dict[Var, PrimExpr] = {v: const(0, v.dtype) for v in index_map.initial_indices}
    for out, s in zip(outputs, sums):
        for arg in s.args:
            piece = op.floormod(op.floordiv(out, arg.scale), arg.extent)
            inverse[arg.source.source] = inverse[arg.source.source] + piece * arg.lower_factor
    return inverse


# ---------------------------------------------------------------- method helpers


class BlockArgumentMethods:
    def _block_argument(self, block: BlockRV | str) -> BlockRV:
        """TVM takes a block name where it takes a block: look it up (and record it, as TVM does)."""
        return self.get_block(block) if isinstance(block, str) else block

    def _prepared(self, kind: str, prepare: Callable):
        """Run ``prepare`` (argument checks that need the block), rendering its errors as ``_run`` does."""
        try:
            return prepare()
        except ScheduleError as err:
            err.render(self.mod, kind, self._error_render_level)
            raise
