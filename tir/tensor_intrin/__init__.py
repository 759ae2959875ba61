"""Tensor intrinsics: a computation (``desc``) paired with the code that does it on a matrix unit (``impl``).

TVM's ``TensorIntrin``. ``desc`` and ``impl`` are ``@T.prim_func``s over the same
buffers (``T.match_buffer`` of ``T.handle`` parameters, in the same order, same
shapes and dtypes): ``desc`` states what is computed, as loops around one block
inside a ``T.block("root")``; ``impl`` states how, usually matrix operations
(tir/matrix_ops.py) on tiles of those buffers. ``sch.tensorize`` matches a block
against ``desc`` and replaces its body by ``impl`` with the buffers bound to the
regions the block touches. The intrinsics we ship register themselves when this
package is imported (metal.py: simdgroup_matrix; cuda.py: WMMA); the README lists
them.

>>> TensorIntrin.get("metal_simdgroup_mma_8x8x8_f32").desc.name   # doctest: +SKIP
'metal_simdgroup_mma_8x8x8_f32_desc'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from ..buffer import Buffer
from ..function import PrimFunc
from ..stmt import BlockRealize, Stmt


class UnknownTensorIntrinError(KeyError, ValueError):
    """No tensor intrinsic is registered under the name asked for."""


@dataclass(frozen=True, eq=False)
class TensorIntrin:
    """A registered tensor intrinsic: its name, the computation it matches and its implementation."""

    name: str
    desc: PrimFunc
    impl: PrimFunc

    # A shipped intrinsic is registered as a factory and parsed on first use (25 scripts cost ~1 s).
    _registry: ClassVar[dict[str, TensorIntrin | Callable[[], tuple[PrimFunc, PrimFunc]]]] = {}

    @staticmethod
    def register(name: str, desc: PrimFunc, impl: PrimFunc, override: bool = False) -> TensorIntrin:
        """Register ``desc``/``impl`` under ``name`` (``override=True`` replaces an existing one)."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"a tensor intrinsic needs a non-empty name, got {name!r}")
        if name in TensorIntrin._registry and not override:
            raise ValueError(
                f"tensor intrinsic {name!r} is already registered; pass override=True to replace it"
            )
        for role, func in (("desc", desc), ("impl", impl)):
            if not isinstance(func, PrimFunc):
                raise TypeError(
                    f"tensor intrinsic {name!r}: {role} must be a @T.prim_func, got {type(func).__name__}"
                )
        _check_same_buffers(name, desc, impl)
        intrin_body(desc, f"tensor intrinsic {name!r}: desc")
        intrin_body(impl, f"tensor intrinsic {name!r}: impl")
        intrin = TensorIntrin(name, desc, impl)
        TensorIntrin._registry[name] = intrin
        return intrin

    @staticmethod
    def register_lazy(name: str, factory: Callable[[], tuple[PrimFunc, PrimFunc]]) -> None:
        """Register ``name`` as ``factory() -> (desc, impl)``, called (and checked) on first ``get``."""
        if name in TensorIntrin._registry:
            raise ValueError(f"tensor intrinsic {name!r} is already registered")
        TensorIntrin._registry[name] = factory

    @staticmethod
    def get(name: str, allow_missing: bool = False) -> TensorIntrin | None:
        """The intrinsic registered as ``name``; an ``UnknownTensorIntrinError`` (a KeyError and, as in
        TVM, a ValueError) lists the known ones, unless ``allow_missing`` (then None)."""
        found = TensorIntrin._registry.get(name)
        if found is None:
            if allow_missing:
                return None
            known = ", ".join(sorted(TensorIntrin._registry)) or "none"
            raise UnknownTensorIntrinError(f"no tensor intrinsic {name!r}; registered: {known}")
        if not isinstance(found, TensorIntrin):
            found = TensorIntrin.register(name, *found(), override=True)
        return found

    @staticmethod
    def names() -> list[str]:
        return sorted(TensorIntrin._registry)


def _check_same_buffers(name: str, desc: PrimFunc, impl: PrimFunc) -> None:
    d, i = desc.buffer_params, impl.buffer_params
    if len(d) != len(i) or len(d) != len(desc.params) or len(i) != len(impl.params):
        raise ValueError(
            f"tensor intrinsic {name!r}: desc and impl must take the same number of buffers and nothing "
            f"else (desc: {len(desc.params)} parameters, impl: {len(impl.params)})"
        )
    for n, (a, b) in enumerate(zip(d, i)):
        if a.static_shape() != b.static_shape() or a.dtype != b.dtype or a.static_shape() is None:
            raise ValueError(
                f"tensor intrinsic {name!r}: buffer {n} differs between desc ({_describe(a)}) and impl "
                f"({_describe(b)}); both need the same constant shape and dtype"
            )


def _describe(buffer: Buffer) -> str:
    return f"{buffer.name} {buffer.static_shape() or buffer.shape} {buffer.dtype} {buffer.scope}"


def intrin_body(func: PrimFunc, what: str) -> Stmt:
    """The body of the innermost iterator-free block that the function's body is made of
    (its ``T.block("root")``): what tensorize matches (desc) or inserts (impl)."""
    body = func.body
    found = None
    while isinstance(body, BlockRealize) and not body.block.iter_vars:
        found = body.block
        body = found.body
    if found is None:
        raise ValueError(f'{what} must have its computation inside `with T.block("root"):`')
    return found.body


from . import cuda, metal  # noqa: E402,F401  (the shipped intrinsics register themselves)
