"""annotate_buffer_access: declare the region a block reads or writes of one buffer (TVM's primitive).

Region inference takes a block's regions from its body; ``annotate_buffer_access``
overrides one of them with a region the user writes as a function of the block's
iterators (``lambda vi, vj: ((vi - 1, vi + 2), vj)``: a ``(start, end)`` pair, end
exclusive, or one index per buffer dimension). The block's ``T.reads``/``T.writes``
entry becomes that region and the block records the index under TVM's annotation
``explicit_read_region`` / ``explicit_write_region``; region inference
(tir/analysis/block_access.py) then keeps the declared region for that buffer and
compact_buffer_allocation sizes a block-local buffer from it instead of the body's
accesses (a halo the body does not touch yet, or a fixed tile).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from tir import Block, BufferRegion, IndexMap, IndexMapError, PrimExpr, Range, Var, const
from tir.analysis.block_access import EXPLICIT_READ_REGION, EXPLICIT_WRITE_REGION
from tir.arith import Analyzer
from tir.functor import substitute

from .errors import ArgumentError, ScheduleError
from .index_maps import BlockArgumentMethods, access_region, as_index_map
from .instruction import BlockRV, primitive
from .state import ScheduleState

# ---------------------------------------------------------------- errors


class BufferAccessRangeError(ScheduleError):
    """gen_new_ranges gives the wrong number of ranges for the buffer's dimensions."""


# ---------------------------------------------------------------- annotate_buffer_access


@primitive()
def annotate_buffer_access(
    state: ScheduleState, block: Block, buffer_index: int, buffer_index_type: str, gen_new_ranges: str
) -> None:
    # Step 1. the region entry, and the map from the block's iterators to (start, end) pairs
    regions = block.reads if buffer_index_type == "read" else block.writes
    buffer = access_region(block, buffer_index_type, buffer_index).buffer
    dtype = block.iter_vars[0].var.dtype if block.iter_vars else "int32"
    index_map = as_index_map(gen_new_ranges, len(block.iter_vars), dtype, block)
    if len(index_map.final_indices) != 2 * buffer.ndim:
        raise BufferAccessRangeError(
            f"buffer {buffer.name} has {buffer.ndim} dimension(s), so the new region needs "
            f"{buffer.ndim} (start, end) pairs; the ranges give {len(index_map.final_indices)} bounds",
            block,
        )

    # Step 2. the declared region over the block's iterators, and the annotation naming it
    analyzer = Analyzer()
    to_iters = {v: iv.var for v, iv in zip(index_map.initial_indices, block.iter_vars)}
    bounds = [substitute(e, to_iters) for e in index_map.final_indices]
    ranges = tuple(
        Range(analyzer.simplify(start), analyzer.simplify(end - start))
        for start, end in zip(bounds[0::2], bounds[1::2])
    )
    new_regions = tuple(
        BufferRegion(buffer, ranges) if k == buffer_index else r for k, r in enumerate(regions)
    )
    key = EXPLICIT_READ_REGION if buffer_index_type == "read" else EXPLICIT_WRITE_REGION
    indices = list(block.annotations.get(key, []))
    if buffer_index not in indices:
        indices.append(buffer_index)
    field = "reads" if buffer_index_type == "read" else "writes"
    new = replace(block, **{field: new_regions}, annotations={**block.annotations, key: indices})
    state.replace({block: new})


def ranges_index_map(gen_new_ranges: Callable, iter_vars: list[Var]) -> IndexMap:
    """TVM's form of the ranges: each entry a ``(start, end)`` pair or one index (``(i, i + 1)``),
    flattened into a map from the block's iterators to ``start0, end0, start1, end1, ...``."""
    spec = gen_new_ranges(*iter_vars)
    if not isinstance(spec, (tuple, list)):
        spec = (spec,)
    bounds: list[PrimExpr] = []
    for entry in spec:
        if isinstance(entry, (tuple, list)):
            if len(entry) != 2:
                raise IndexMapError(f"a range is a (start, end) pair, got {entry!r}")
            bounds.extend(entry)
        else:
            bounds.extend([entry, entry + 1])
    dtype = iter_vars[0].dtype if iter_vars else "int32"
    return IndexMap(
        tuple(iter_vars), tuple(b if isinstance(b, PrimExpr) else const(b, dtype) for b in bounds)
    )


# ---------------------------------------------------------------- public methods


class BufferAccessMethods(BlockArgumentMethods):
    def annotate_buffer_access(
        self,
        block: BlockRV | str,
        buffer_index: int,
        buffer_index_type: str,
        gen_new_ranges: Callable | IndexMap | str,
    ) -> None:
        """Declare the region ``block`` reads (or writes) of its ``buffer_index``-th buffer.

        ``annotate_buffer_access`` in TVM. ``gen_new_ranges`` takes the block's
        iterators and returns, per buffer dimension, a ``(start, end)`` pair (end
        exclusive) or a single index. The block's region becomes the declared one and
        stays so: region inference keeps it, and compact_buffer_allocation sizes a
        block-local buffer from it. The body is unchanged, so the numbers are too;
        a region smaller than what the body touches is the caller's mistake.

        Requirements: ``buffer_index_type`` is ``"read"`` or ``"write"`` and
        ``buffer_index`` indexes that list; one entry per buffer dimension.

        Example
        -------
        >>> sch = Schedule(tir.parse(_SCALE))
        >>> sch.annotate_buffer_access("B", 0, "read", lambda vi: ((vi, vi + 2),))
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((10,), "float32"), B: T.Buffer((8,), "float32")):
            # with T.block("root"):
            for i in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    T.reads(A[vi:vi + 2])
                    T.writes(B[vi])
                    T.block_attr({"explicit_read_region": [0]})
                    B[vi] = A[vi + 1] * T.float32(2.0)
        """
        block = self._block_argument(block)
        node = self.get(block)

        def prepare():
            if isinstance(gen_new_ranges, (str, IndexMap)):
                index_map = gen_new_ranges
            else:
                try:
                    index_map = ranges_index_map(gen_new_ranges, [iv.var for iv in node.iter_vars])
                except (IndexMapError, TypeError) as err:
                    raise ArgumentError(f"annotate_buffer_access: gen_new_ranges: {err}", node) from None
            dtype = node.iter_vars[0].var.dtype if node.iter_vars else "int32"
            return str(as_index_map(index_map, len(node.iter_vars), dtype, node))

        text = self._prepared("annotate_buffer_access", prepare)
        return self._run(
            "annotate_buffer_access",
            block=block,
            buffer_index=buffer_index,
            buffer_index_type=buffer_index_type,
            gen_new_ranges=text,
        )


# The program the example above schedules (doctest globals: tir, Schedule).
_SCALE = """
@T.prim_func
def main(A: T.Buffer((10,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi + 1] * T.float32(2)
"""
