"""flatten_buffer: make every buffer one-dimensional, with row-major indices.

Fourth lowering pass; it runs on block-free IR (after lower_opaque_block). Each
buffer of two or more dimensions (or none), parameter or ``Allocate``d, is
replaced by a new Buffer of the same name, dtype and scope and shape
``(prod(shape),)``, and each access ``A[i, j, k]`` by ``A_flat[(i * d1 + j) * d2 + k]``,
simplified under the ranges of the enclosing loops. The function's parameters
become the flat buffers; ``func.attrs["original_shapes"]`` keeps every buffer
parameter's original shape (ints where static) so a runtime can still check the
arrays a user passes. One vector (Ramp) index in one dimension is allowed and
stays a Ramp over the flat index. A buffer with ``strides`` (padded by
``storage_align``, see compact_buffer_allocation) is indexed by them instead,
``A[i, j]`` becoming ``A_flat[i * s0 + j * s1]``, and holds ``shape[0] * s0``
elements, as TVM allocates it (``Buffer.flat_size``).
"""

from __future__ import annotations

from dataclasses import replace
from functools import reduce

from ..buffer import Buffer
from ..expr import Broadcast, BufferLoad, IntImm, PrimExpr, Ramp, const
from ..function import PrimFunc
from ..functor import post_order_visit
from ..stmt import Allocate, Block, BlockRealize, BufferStore, Stmt
from .simplify import LoopRangeMutator


def _flat_buffer(buffer: Buffer) -> Buffer:
    return Buffer(buffer.name, (buffer.flat_size(),), buffer.dtype, buffer.scope)


def _index_dtype(buffer: Buffer) -> str:
    return "int64" if any(dim.dtype == "int64" for dim in buffer.shape) else "int32"


class _Flattener(LoopRangeMutator):
    def __init__(self, flat: dict[Buffer, Buffer]):
        super().__init__()
        self.flat = flat

    def visit_Allocate(self, alloc: Allocate) -> Stmt:
        buffer = self._flat_of(alloc.buffer)
        body = self.visit(alloc.body)
        if buffer is alloc.buffer and body is alloc.body:
            return alloc
        return Allocate(buffer, body)

    def visit_BufferLoad(self, load: BufferLoad) -> PrimExpr:
        load = self.generic_visit(load)
        flat = self._flat_of(load.buffer)
        if flat is load.buffer:
            return load
        return BufferLoad(flat, (self._linear_index(load.buffer, load.indices),))

    def visit_BufferStore(self, store: BufferStore) -> Stmt:
        store = self.generic_visit(store)
        flat = self._flat_of(store.buffer)
        if flat is store.buffer:
            return store
        return BufferStore(flat, store.value, (self._linear_index(store.buffer, store.indices),))

    def visit_BlockRealize(self, realize: BlockRealize) -> Stmt:
        raise ValueError(
            f"flatten_buffer: found block '{realize.block.name}'; flatten_buffer runs on block-free IR, "
            "run lower_opaque_block first (or use tir.transform.lower)"
        )

    def visit_Block(self, block: Block) -> Stmt:
        return self.visit_BlockRealize(BlockRealize((), IntImm(1, "bool"), block))

    def _flat_of(self, buffer: Buffer) -> Buffer:
        if buffer.ndim == 1 and not buffer.strides:
            return buffer
        flat = self.flat.get(buffer)
        if flat is None:
            flat = self.flat[buffer] = _flat_buffer(buffer)
        return flat

    def _linear_index(self, buffer: Buffer, indices: tuple[PrimExpr, ...]) -> PrimExpr:
        vector = [(k, i) for k, i in enumerate(indices) if isinstance(i, (Ramp, Broadcast))]
        if len(vector) > 1:
            raise ValueError(
                f"flatten_buffer: access to {buffer.name} has vector indices in several dimensions "
                f"({len(vector)}); only one dimension may be a Ramp or Broadcast"
            )
        if not vector:
            return self._row_major(buffer, indices)
        dim, index = vector[0]
        if isinstance(index, Broadcast):
            scalar = list(indices)
            scalar[dim] = index.value
            return Broadcast(self._row_major(buffer, tuple(scalar)), index.lanes)
        scalar = list(indices)
        scalar[dim] = index.base
        if buffer.strides:
            stride = buffer.strides[dim]
        else:
            stride = reduce(lambda a, b: a * b, buffer.shape[dim + 1 :], const(1, index.stride.dtype))
        base = self._row_major(buffer, tuple(scalar))
        return Ramp(base, self.analyzer.simplify(index.stride * stride), index.lanes)

    def _row_major(self, buffer: Buffer, indices: tuple[PrimExpr, ...]) -> PrimExpr:
        if not indices:
            return const(0, _index_dtype(buffer))
        if buffer.strides:
            terms = [index * stride for index, stride in zip(indices, buffer.strides)]
            return self.analyzer.simplify(reduce(lambda a, b: a + b, terms))
        linear = indices[0]
        for dim, index in zip(buffer.shape[1:], indices[1:]):
            linear = linear * dim + index
        return self.analyzer.simplify(linear)


def _allocated_buffers(body: Stmt) -> list[Buffer]:
    found: list[Buffer] = []
    post_order_visit(body, lambda n: found.append(n.buffer) if isinstance(n, Allocate) else None)
    return found


def _shape_record(buffer: Buffer) -> list:
    return [dim.value if isinstance(dim, IntImm) else dim for dim in buffer.shape]


def flatten_buffer(func: PrimFunc) -> PrimFunc:
    """Make every buffer one-dimensional; the parameters become the flat buffers."""
    buffers = [*func.buffer_params, *_allocated_buffers(func.body)]
    flat = {b: _flat_buffer(b) for b in buffers if b.ndim != 1 or b.strides}
    body = _Flattener(flat).visit(func.body)
    params = tuple(flat.get(p, p) if isinstance(p, Buffer) else p for p in func.params)
    attrs = dict(func.attrs)
    attrs["original_shapes"] = {b.name: _shape_record(b) for b in func.buffer_params}
    return replace(func, params=params, body=body, attrs=attrs)
