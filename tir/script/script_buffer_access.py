"""Buffer accesses in TVMScript: element indices, stores and the regions of T.reads/T.writes.

``BufferAccess`` is a mixin of ``_FunctionBuilder`` (script_builder.py). It checks that a
buffer is indexed with as many integer indices as it has dimensions, converts a stored value
to the buffer's dtype (constants are cast, other expressions must already match; scalars
broadcast to vector stores), and turns ``A[vi, 0:16]`` into a BufferRegion for the block
directives of script_calls.py.
"""

from __future__ import annotations

from typing import Any

from lark import Tree

from .. import dtype as _dt
from .. import op
from ..buffer import Buffer, BufferRegion
from ..expr import FloatImm, IntImm, PrimExpr, Range, const
from ..stmt import BufferStore, Stmt
from .script_values import _as_index, _describe, _extent, _index_dtype, _plural, _RegionView


class BufferAccess:
    """Indices, stores and regions of buffers, checked against their shape and dtype."""

    def _store(self, target: Tree, value: Any, value_node: Tree) -> Stmt:
        base_node, *index_nodes = target.children
        buffer = self._value(base_node)
        if isinstance(buffer, _RegionView):
            indices = buffer.source_indices(self._indices(target, buffer.view, index_nodes))
            return self._store_to(buffer.region.buffer, indices, value, value_node)
        if not isinstance(buffer, Buffer):
            raise self.error(
                base_node, f"cannot store into an element of {_describe(buffer)}: it is not a buffer"
            )
        indices = self._indices(target, buffer, index_nodes)
        return self._store_to(buffer, indices, value, value_node)

    def _store_to(self, buffer: Buffer, indices: tuple[PrimExpr, ...], value: Any, node: Tree) -> Stmt:
        lanes = max((_dt.lanes_of(i.dtype) for i in indices), default=1)
        value = self._convert(value, _dt.with_lanes(buffer.dtype, lanes), node, f"buffer {buffer.name}")
        return BufferStore(buffer, value, indices)

    def _convert(self, value: Any, dtype: str, node: Tree, into: str) -> PrimExpr:
        """``value`` as ``dtype``: constants are cast, integer expressions go into float buffers by a
        cast, other expressions must already match."""
        base, lanes = _dt.element_of(dtype), _dt.lanes_of(dtype)
        hint = f'convert it explicitly with T.Cast("{base}", ...)'
        if isinstance(value, (int, float)) and not isinstance(value, PrimExpr):
            if isinstance(value, float) and not _dt.is_float(base):
                raise self.error(node, f"{into} holds {base} but the value is the float {value}", hint=hint)
            value = const(value, base) if isinstance(value, float) else op.cast(base, const(value))
        elif isinstance(value, (IntImm, FloatImm)) and value.dtype != base:
            if _dt.is_float(value.dtype) and not _dt.is_float(base):
                raise self.error(node, f"{into} holds {base} but the value is {value.dtype}", hint=hint)
            value = op.cast(base, value)
        elif not isinstance(value, PrimExpr):
            raise self.error(node, f"{into} holds {base} values, not {_describe(value)}")
        elif _dt.is_integer(_dt.element_of(value.dtype)) and _dt.is_float(base):
            # An integer expression stored into a float buffer (``B[vi] = vi``) converts, as in TVM;
            # the other way round (dropping a fraction) must be written out.
            value = op.cast(_dt.with_lanes(base, _dt.lanes_of(value.dtype)), value)
        elif _dt.element_of(value.dtype) != base:
            raise self.error(node, f"{into} holds {base} but the value is {value.dtype}", hint=hint)
        if _dt.lanes_of(value.dtype) == lanes:
            return value
        if _dt.lanes_of(value.dtype) == 1:
            return op.broadcast(value, lanes)
        raise self.error(node, f"{into} takes {_plural(lanes, 'lane')} here but the value has {value.dtype}")

    def _indices(self, node: Tree, buffer: Buffer, index_nodes: list[Tree]) -> tuple[PrimExpr, ...]:
        if any(n.data == "slice" for n in index_nodes):
            raise self.error(
                node, "a slice is only allowed in T.reads/T.writes regions", hint="index one element"
            )
        values = [self._value(n) for n in index_nodes]
        if len(values) == 1 and isinstance(values[0], tuple):  # A[()] and A[(i, j)]
            values = list(values[0])
            index_nodes = index_nodes * len(values)
        self._check_rank(node, buffer, len(values))
        return tuple(self._index(v, n, buffer) for v, n in zip(values, index_nodes))

    def _check_rank(self, node: Tree, buffer: Buffer, count: int) -> None:
        if count != buffer.ndim:
            raise self.error(
                node,
                f"buffer {buffer.name} has {_plural(buffer.ndim, 'dimension')} "
                f"but is indexed with {_plural(count, 'index', 'indices')}",
            )

    def _index(self, value: Any, node: Tree, buffer: Buffer) -> PrimExpr:
        if isinstance(value, int) and not isinstance(value, bool):
            return const(value)
        if isinstance(value, PrimExpr) and _dt.is_integer(value.dtype):
            return value
        raise self.error(node, f"an index of buffer {buffer.name} must be an integer, not {_describe(value)}")

    def _regions(self, node: Tree) -> list[BufferRegion]:
        """The regions one argument of T.reads/T.writes names: A[vi, 0:16], A, or a list of them."""
        if node.data in ("list", "tuple"):
            return [region for item in node.children if item is not None for region in self._regions(item)]
        if node.data == "subscript":
            base_node, *index_nodes = node.children
            buffer = self._value(base_node)
            if isinstance(buffer, Buffer):
                return [BufferRegion(buffer, self._ranges(node, buffer, index_nodes))]
        value = self._value(node)
        if isinstance(value, Buffer):
            return [value.full_region()]
        raise self.error(
            node, f"{_describe(value)} is not a buffer region", hint="write A[vi, 0:16] or a buffer name"
        )

    def _ranges(self, node: Tree, buffer: Buffer, index_nodes: list[Tree]) -> tuple[Range, ...]:
        if len(index_nodes) == 1 and index_nodes[0].data == "tuple" and not index_nodes[0].children:
            index_nodes = []
        self._check_rank(node, buffer, len(index_nodes))
        ranges = []
        for dim, item in enumerate(index_nodes):
            if item.data != "slice":
                point = self._index(self._value(item), item, buffer)
                ranges.append(Range(point, IntImm(1, point.dtype)))
                continue
            start, stop, step = item.children
            if step is not None:
                raise self.error(step, "a region slice cannot have a step")
            lo = self._index(self._value(start), start, buffer) if start is not None else 0
            hi = self._index(self._value(stop), stop, buffer) if stop is not None else buffer.shape[dim]
            dtype = _index_dtype(lo, hi)
            lo, hi = _as_index(lo, dtype), _as_index(hi, dtype)
            ranges.append(Range(lo, _extent(lo, hi)))
        return tuple(ranges)
