"""lower_matrix_fragments: check fragment use and turn tiles into what the printers emit.

GPU pipeline pass on block-form IR after compact_buffer_allocation (buffers have
their final shapes) and before flatten_buffer. It checks what a matrix unit needs
and fails with a ValueError (a BuildError to the user) naming the buffer otherwise:

- a fragment (``metal.simdgroup``, ``wmma.*`` scopes) is touched only by matrix
  operations (tir/matrix_ops.py): a plain load or store of one means a block that
  was not tensorized;
- every matrix operation belongs to the target being built (no ``simdgroup_load``
  in a CUDA kernel);
- a fragment's tiles are whole tiles of the operation's shape, at multiples of it.

Then it rewrites each fragment of shape ``(..., R, C)`` used in ``r x c`` tiles into
an array of ``(..., R / r, C / c)`` fragment objects (``simdgroup_float8x8
A_frag[4]`` in Metal), and each tile argument ``tir.tile(A[first], A[last])`` into
``tir.tile_ptr(A[first'], stride)``: the fragment element for a fragment, or the
tile's first element and its row stride (the buffer's own stride of its rows, which
storage_align may pad, or its last extent) for memory.
flatten_buffer then flattens ``A[first']`` like any load, and the printers print
``tir.tile_ptr`` as a fragment or a pointer and a stride.
"""

from __future__ import annotations

from dataclasses import replace

from .. import op
from ..arith import Analyzer
from ..buffer import Buffer, BufferRegion, is_fragment
from ..dtype import bytes_of
from ..expr import BufferLoad, Call, IntImm, PrimExpr, const
from ..function import PrimFunc
from ..functor import Mutator, Visitor
from ..matrix_ops import is_tile, matrix_op_of, tile_shape
from ..stmt import Block, BufferStore, Evaluate

TILE_PTR = "tir.tile_ptr"


class _FragmentCheck(Visitor):
    """Finds each fragment's tile shape; fails on other uses and on foreign matrix operations."""

    def __init__(self, target_kind: str):
        self.target_kind = target_kind
        self.tile_shapes: dict[Buffer, tuple[int, int]] = {}
        self.matrix_ops = 0

    def visit_Evaluate(self, stmt: Evaluate) -> None:
        op = matrix_op_of(stmt.value)
        if op is None:
            self.generic_visit(stmt)
            return
        self.matrix_ops += 1
        if op.target != self.target_kind:
            raise ValueError(
                f"{op.name} is a {op.target} matrix operation; this build targets {self.target_kind} "
                f"(tensorize with a {self.target_kind} intrinsic instead)"
            )
        for position, arg in enumerate(stmt.value.args):
            if position not in op.tile_positions:
                self.visit(arg)
                continue
            for corner in arg.args:
                for index in corner.indices:
                    self.visit(index)
            self._tile(op.name, arg, op.shapes[op.tile_positions.index(position)])

    def _tile(self, op_name: str, arg: Call, shape: tuple[int, int]) -> None:
        buffer = arg.args[0].buffer
        if tile_shape(arg) != shape:
            raise ValueError(
                f"{op_name} needs a {shape[0]}x{shape[1]} tile of {buffer.name}, got the region "
                f"{arg.args[0].indices}..{arg.args[1].indices}"
            )
        if not is_fragment(buffer.scope):
            if self.target_kind == "cuda":
                _check_cuda_alignment(op_name, arg)
            return
        known = self.tile_shapes.setdefault(buffer, shape)
        extents = buffer.static_shape()
        if known != shape or extents is None or extents[-2] % shape[0] or extents[-1] % shape[1]:
            raise ValueError(
                f"fragment {buffer.name} {buffer.shape} is used in {shape[0]}x{shape[1]} tiles; its last two "
                f"extents must be multiples of the tile, and every operation must use the same tile"
            )

    def visit_BufferLoad(self, load: BufferLoad) -> None:
        self._plain_access(load.buffer, load)
        self.generic_visit(load)

    def visit_BufferStore(self, store: BufferStore) -> None:
        self._plain_access(store.buffer, store)
        self.generic_visit(store)

    def _plain_access(self, buffer: Buffer, node) -> None:
        if is_fragment(buffer.scope):
            raise ValueError(
                f"fragment {buffer.name} (scope {buffer.scope!r}) is read or written outside a matrix "
                f"operation ({node!r}); only tensorized blocks may touch a fragment: tensorize the block "
                f"that does, or keep {buffer.name} in 'local' or 'shared' memory"
            )


def _check_cuda_alignment(op_name: str, arg: Call) -> None:
    """WMMA loads and stores need a 32-byte aligned tile start, ldmatrix and mma_store 16 bytes; both
    need rows a multiple of 16 bytes apart. A misaligned tile is undefined behaviour on the GPU."""
    first = arg.args[0]
    buffer = first.buffer
    element = bytes_of(buffer.dtype)
    strides = list(buffer.strides) if buffer.strides else _row_major(buffer.shape)
    start = const(0, "int32")
    for index, stride in zip(first.indices, strides):
        start = start + index * stride
    align = 32 if op_name.startswith("wmma") else 16
    analyzer = Analyzer()
    row = strides[-2] * element
    if not analyzer.can_prove(op.floormod(start * element, align).equal(0)) or not analyzer.can_prove(
        op.floormod(row, 16).equal(0)
    ):
        raise ValueError(
            f"{op_name} reads or writes a tile of {buffer.name} starting at {list(first.indices)} with rows "
            f"{strides[-2]} elements apart: the tile must start at a multiple of {align} bytes and its rows "
            f"be a multiple of 16 bytes apart ({element}-byte elements); align the tile (split the loops by "
            "the tile) or pad the rows (storage_align)"
        )


def _row_major(shape) -> list:
    strides, step = [], const(1, "int32")
    for extent in reversed(shape):
        strides.insert(0, step)
        step = step * extent
    return strides


class _TileLowering(Mutator):
    def __init__(self, fragments: dict[Buffer, Buffer], tile_shapes: dict[Buffer, tuple[int, int]]):
        self.fragments = fragments
        self.tile_shapes = tile_shapes

    def visit_Call(self, call: Call) -> PrimExpr:
        if not is_tile(call):
            return self.generic_visit(call)
        first = call.args[0]
        buffer = first.buffer
        if buffer in self.fragments:
            rows, cols = self.tile_shapes[buffer]
            indices = (*first.indices[:-2], first.indices[-2] // rows, first.indices[-1] // cols)
            return Call("handle", TILE_PTR, (BufferLoad(self.fragments[buffer], indices), IntImm(0, "int32")))
        stride = buffer.strides[-2] if buffer.strides else buffer.shape[-1]  # padded rows keep their stride
        return Call("handle", TILE_PTR, (first, stride))

    def visit_Block(self, block: Block) -> Block:
        block = self.generic_visit(block)
        allocs = tuple(self.fragments.get(b, b) for b in block.alloc_buffers)
        regions = [tuple(self._region(r) for r in rs) for rs in (block.reads, block.writes)]
        if allocs == block.alloc_buffers and regions == [block.reads, block.writes]:
            return block
        return replace(block, alloc_buffers=allocs, reads=regions[0], writes=regions[1])

    def _region(self, region: BufferRegion) -> BufferRegion:
        new = self.fragments.get(region.buffer)
        if new is None:
            return region
        return new.full_region()  # _tiled keeps the number of dimensions


def _tiled(buffer: Buffer, shape: tuple[int, int]) -> Buffer:
    *lead, rows, cols = buffer.shape
    dims = (*lead, IntImm(rows.value // shape[0], rows.dtype), IntImm(cols.value // shape[1], cols.dtype))
    return Buffer(buffer.name, tuple(dims), buffer.dtype, buffer.scope)


def lower_matrix_fragments(func: PrimFunc, target_kind: str) -> PrimFunc:
    """Check fragment use and lower tiles (see the module docstring)."""
    fragments_as_params = [p.name for p in func.buffer_params if is_fragment(p.scope)]
    if fragments_as_params:
        raise ValueError(
            f"fragment buffers can't be function parameters ({', '.join(fragments_as_params)}): a fragment "
            "lives in the registers of one simdgroup; allocate it in the function (cache_read/cache_write)"
        )
    check = _FragmentCheck(target_kind)
    check.visit(func.body)
    if not check.matrix_ops:
        return func
    fragments = {b: _tiled(b, shape) for b, shape in check.tile_shapes.items()}
    return func.with_body(_TileLowering(fragments, check.tile_shapes).visit(func.body))
