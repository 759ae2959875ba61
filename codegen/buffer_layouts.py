"""What the build accepts of TVM's buffer layout fields (strides, elem_offset, offset_factor, align).

Our runtimes pass every array from its first element, compact and row-major, so the build
takes a buffer whose layout is that one, and binds a symbolic element offset (the variable
``T.Buffer(..., offset_factor=16)`` makes, which a script reads as ``A.elem_offset``) to 0, as
TVM binds it from the array a function is called with. Explicit strides that are not the
shape's own on a parameter, or a constant offset other than 0, are a BuildError naming the
buffer: they describe a view of memory, which the runtimes cannot hand over. A buffer the
function allocates may have strides of its own (padded rows, as ``storage_align`` lowers to):
flatten_buffer indexes and sizes it by them. A buffer with TVM's ``axis_separators``
(``set_axis_separator``) asks for memory of more than one physical axis (2-D textures);
our targets have flat memory only, so that is a BuildError too.
"""

from __future__ import annotations

from tir.buffer import Buffer
from tir.expr import PrimExpr, Var, const
from tir.function import PrimFunc
from tir.functor import post_order_visit, substitute
from tir.stmt import Allocate, Block

from .errors import BuildError


def bind_buffer_layouts(func: PrimFunc, where: str) -> PrimFunc:
    """``func`` with every symbolic element offset replaced by 0; a view-shaped buffer is refused."""
    offsets: dict[Var, PrimExpr] = {}
    params = {param for param in func.params if isinstance(param, Buffer)}
    for buffer in _buffers(func):
        if buffer.axis_separators:
            raise BuildError(
                f"{where}: buffer {buffer.name} has axis_separators {list(buffer.axis_separators)} "
                "(set_axis_separator): it asks for memory of more than one physical axis, such as a 2-D "
                "texture, and the C, CUDA and Metal targets here have flat memory only. Drop the "
                "set_axis_separator call (or pass axis_separators=[]) to build a flat buffer"
            )
        offset = buffer.elem_offset
        strides_ok = buffer not in params or buffer.has_compact_strides()
        if strides_ok and (offset is None or isinstance(offset, Var)):
            if offset is not None:
                offsets[offset] = const(0, offset.dtype)
        else:
            raise BuildError(
                f"{where}: buffer {buffer.name} declares strides or an element offset of its own; "
                "the build takes compact row-major parameters (strides as the shape gives them, offset 0) "
                "and allocated buffers at offset 0"
            )
    if not offsets:
        return func
    return func.with_body(substitute(func.body, offsets))


def _buffers(func: PrimFunc) -> list[Buffer]:
    found = [param for param in func.params if isinstance(param, Buffer)]

    def visit(node) -> None:
        if isinstance(node, Block):
            found.extend(node.alloc_buffers)
        elif isinstance(node, Allocate):
            found.append(node.buffer)

    post_order_visit(func.body, visit)
    return found
