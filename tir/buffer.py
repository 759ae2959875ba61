"""Buffers: named, typed, shaped storage in a memory scope.

A Buffer is compared by identity like a Var: two buffers with the same name and
shape are different buffers. ``scope`` is "global", "shared" (Metal's
threadgroup memory) or "local" (registers / thread memory). The layout fields
TVM's buffers carry (``strides``, ``elem_offset``, ``offset_factor``, ``align``)
are kept as written: empty strides mean compact row-major, ``elem_offset`` None
means 0; a buffer with ``offset_factor`` and no ``elem_offset`` gets a Var
``<name>_elem_offset``, as in TVM, which tensorize binds to where a region starts.
compact_buffer_allocation also sets ``strides`` (one per dimension, in elements)
on a buffer that ``storage_align`` pads, and flatten_buffer indexes and sizes
the buffer by them. ``axis_separators`` (TVM's, set by ``set_axis_separator``)
splits the dimensions into groups that flatten to separate physical axes
(``[1]`` on a 2-D buffer: two axes, for 2-D textures); our targets have flat
memory only, so the build refuses a buffer that has any.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import dtype as _dt
from .expr import BufferLoad, IntImm, PrimExpr, Range, Var, const

# Fragments live in registers spread over a simdgroup (warp); the names are TVM's where it has them.
FRAGMENT_SCOPES = ("metal.simdgroup", "wmma.matrix_a", "wmma.matrix_b", "wmma.accumulator", "warp")
SCOPES = ("global", "shared", "local", *FRAGMENT_SCOPES)
DEFAULT_ALIGN = 64  # bytes: what TVM assumes when a buffer names no alignment
SCOPE_ALIASES = {"threadgroup": "shared", "thread": "local", "device": "global", "shared.dyn": "shared"}


def is_fragment(scope: str) -> bool:
    """Whether ``scope`` holds matrix-unit fragments (only matrix operations touch them)."""
    return scope in FRAGMENT_SCOPES


def storage_class(scope: str) -> str:
    """ "global", "shared" or "local": where a scope lives for placement and relaxation (fragments
    belong to one simdgroup, which analyses treat like one thread's registers)."""
    return "local" if is_fragment(scope) else scope


def normalize_scope(scope: str) -> str:
    """Map a scope name or its Metal alias to our name, or raise ValueError.

    The empty name means "global", as in TVM (``T.alloc_buffer(..., scope="")``).
    """
    scope = SCOPE_ALIASES.get(scope, scope) or "global"
    if scope not in SCOPES:
        raise ValueError(
            f"unknown storage scope {scope!r}; expected one of {', '.join(SCOPES)} "
            f"(Metal names {', '.join(SCOPE_ALIASES)} are accepted too)"
        )
    return scope


def check_axis_separators(separators, ndim: int, name: str) -> None:
    """Raise ValueError unless ``separators`` are increasing ints in ``1 .. ndim - 1``."""
    plain = all(isinstance(s, int) and not isinstance(s, bool) for s in separators)
    if not plain or list(separators) != sorted(set(separators)) or any(not 0 < s < ndim for s in separators):
        raise ValueError(
            f"buffer {name} has {ndim} dimensions; axis_separators {list(separators)} must be increasing "
            f"integers between 1 and {ndim - 1} (a separator k starts a new physical axis at dimension k)"
        )


@dataclass(frozen=True, slots=True, eq=False)
class Buffer:
    name: str
    shape: tuple[PrimExpr, ...]
    dtype: str = "float32"
    scope: str = "global"
    strides: tuple[PrimExpr, ...] = ()
    elem_offset: PrimExpr | None = None
    offset_factor: int = 0
    align: int = 0
    axis_separators: tuple[int, ...] = ()

    def __post_init__(self):
        _dt.check(self.dtype)
        if self.scope not in SCOPES:
            object.__setattr__(self, "scope", normalize_scope(self.scope))
        if not all(isinstance(s, PrimExpr) for s in self.shape):
            object.__setattr__(self, "shape", tuple(const(s) for s in self.shape))
        if self.strides:  # the layout fields: a plain row-major buffer (the common case) skips them
            if not all(isinstance(s, PrimExpr) for s in self.strides):
                object.__setattr__(self, "strides", tuple(const(s) for s in self.strides))
            if len(self.strides) != len(self.shape):
                raise ValueError(
                    f"buffer {self.name} has {len(self.shape)} dimensions but {len(self.strides)} strides"
                )
        zero_offset = False
        if self.elem_offset is not None:
            if not isinstance(self.elem_offset, PrimExpr):
                object.__setattr__(self, "elem_offset", const(self.elem_offset))
            if isinstance(self.elem_offset, IntImm) and self.elem_offset.value == 0:
                object.__setattr__(self, "elem_offset", None)  # the default, spelled one way
                zero_offset = True
        if not isinstance(self.axis_separators, tuple):
            object.__setattr__(self, "axis_separators", tuple(self.axis_separators))
        if self.axis_separators:
            check_axis_separators(self.axis_separators, len(self.shape), self.name)
        if self.elem_offset is None and self.offset_factor and not zero_offset:
            object.__setattr__(self, "elem_offset", Var(f"{self.name}_elem_offset", "int32"))
        # TVM's defaults spelled one way: offset 0 is a multiple of any factor, and 64 bytes is the
        # alignment every allocation has anyway (T.match_buffer(..., elem_offset=0, align=64,
        # offset_factor=1) is the plain buffer, as in TVM).
        if self.elem_offset is None and self.offset_factor:
            object.__setattr__(self, "offset_factor", 0)
        if self.align == DEFAULT_ALIGN:
            object.__setattr__(self, "align", 0)

    def is_compact(self) -> bool:
        """True when the layout is the default one: row-major strides (or none) and offset 0."""
        return self.elem_offset is None and self.has_compact_strides()

    def has_compact_strides(self) -> bool:
        """True when the strides are none or the row-major ones of the shape."""
        expected = 1
        for stride, extent in zip(reversed(self.strides), reversed(self.shape)):
            if not (isinstance(stride, IntImm) and stride.value == expected and isinstance(extent, IntImm)):
                return False
            expected *= extent.value
        return True

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __getitem__(self, indices) -> BufferLoad:
        if not isinstance(indices, tuple):
            indices = (indices,)
        if len(indices) != len(self.shape):
            raise IndexError(
                f"buffer {self.name} has {len(self.shape)} dimensions, indexed with {len(indices)}"
            )
        return BufferLoad(self, tuple(const(i) for i in indices))

    def full_region(self) -> BufferRegion:
        return BufferRegion(self, tuple(Range(const(0, s.dtype), s) for s in self.shape))

    def flat_size(self) -> PrimExpr:
        """Elements the buffer spans, padding included, as TVM allocates it: ``shape[0] * strides[0]``
        when it has strides (storage_align pads each row), the product of the shape otherwise.
        flatten_buffer allocates this many, a pipeline's versions are this far apart, and
        ``static_nbytes`` counts it."""
        if self.strides:
            return self.shape[0] * self.strides[0]
        index_dtype = "int64" if any(dim.dtype == "int64" for dim in self.shape) else "int32"
        size = const(1, index_dtype)
        for extent in self.shape:
            size = size * extent
        return size

    def static_nbytes(self) -> int | None:
        """Bytes the buffer occupies (padding included), or None when its size is symbolic."""
        size = self.flat_size()
        return size.value * _dt.bytes_of(self.dtype) if isinstance(size, IntImm) else None

    def static_shape(self) -> tuple[int, ...] | None:
        """The shape as Python ints, or None when a dimension is symbolic."""
        out = []
        for s in self.shape:
            if not hasattr(s, "value") or not isinstance(s.value, int):
                return None
            out.append(s.value)
        return tuple(out)

    def __repr__(self) -> str:
        shape = ", ".join(repr(s) for s in self.shape)
        strides = f", strides=({', '.join(repr(s) for s in self.strides)})" if self.strides else ""
        return f"Buffer({self.name}, ({shape}), {self.dtype!r}, scope={self.scope!r}{strides})"


def decl_buffer(shape, dtype: str = "float32", name: str = "buffer", scope: str = "global") -> Buffer:
    """TVM's ``tir.decl_buffer``: a Buffer of ``shape`` (an int or a sequence) not yet in any function.

    >>> decl_buffer(4, "int32", name="other").shape
    (4,)
    """
    dims = (shape,) if isinstance(shape, (int, PrimExpr)) else tuple(shape)
    return Buffer(name, dims, dtype, scope)


@dataclass(frozen=True, slots=True, eq=False)
class BufferRegion:
    """A rectangular region of a buffer, one Range per dimension."""

    buffer: Buffer
    region: tuple[Range, ...]

    def __repr__(self) -> str:
        dims = ", ".join(f"{r.min!r}:{r.min + r.extent!r}" for r in self.region)
        return f"{self.buffer.name}[{dims}]"
