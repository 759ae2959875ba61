"""Script templates that the shipped intrinsics (metal.py, cuda.py) are instantiated from.

Each intrinsic family differs only in tile size, dtypes, scopes and the matrix
operation it calls, so the desc/impl pairs are written once here as TVMScript text
with placeholders and parsed per variant (``tir.parse``) when first used, rather
than repeated.
"""

from __future__ import annotations

from ..function import PrimFunc
from ..script import parse
from . import TensorIntrin

# The parameters and buffers of each family; the desc and the impl share them and differ in the body.
_COPY_HEAD = """
@T.prim_func
def {name}_{role}(a: T.handle, b: T.handle):
    A = T.match_buffer(a, ({m}, {n}), "{src_dtype}", scope="{src_scope}", offset_factor=1)
    B = T.match_buffer(b, ({m}, {n}), "{dst_dtype}", scope="{dst_scope}", offset_factor=1)
    with T.block("root"):
        T.reads(A[0:{m}, 0:{n}])
        T.writes(B[0:{m}, 0:{n}])
"""

_COPY_DESC = """
        for i, j in T.grid({m}, {n}):
            with T.block("copy"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj]
"""

_COPY_IMPL = """
        T.{op}({frag}[0:{m}, 0:{n}], {other}[0:{m}, 0:{n}])
"""

_FILL_HEAD = """
@T.prim_func
def {name}_{role}(c: T.handle):
    C = T.match_buffer(c, ({m}, {n}), "{dtype}", scope="{scope}", offset_factor=1)
    with T.block("root"):
        T.reads()
        T.writes(C[0:{m}, 0:{n}])
"""

_FILL_DESC = """
        for i, j in T.grid({m}, {n}):
            with T.block("fill"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = T.{dtype}(0)
"""

_FILL_IMPL = """
        T.{op}(C[0:{m}, 0:{n}], T.{dtype}(0))
"""

_MMA_HEAD = """
@T.prim_func
def {name}_{role}(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, ({m}, {k}), "{in_dtype}", scope="{a_scope}", offset_factor=1)
    B = T.match_buffer(b, ({k}, {n}), "{in_dtype}", scope="{b_scope}", offset_factor=1)
    C = T.match_buffer(c, ({m}, {n}), "{acc_dtype}", scope="{c_scope}", offset_factor=1)
    with T.block("root"):
        T.reads(C[0:{m}, 0:{n}], A[0:{m}, 0:{k}], B[0:{k}, 0:{n}])
        T.writes(C[0:{m}, 0:{n}])
"""

_MMA_DESC = """
        for i, j, k in T.grid({m}, {n}, {k}):
            with T.block("update"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                C[vi, vj] = C[vi, vj] + {a_load} * {b_load}
"""

_MMA_IMPL = """
        T.{op}(C[0:{m}, 0:{n}], A[0:{m}, 0:{k}], B[0:{k}, 0:{n}], C[0:{m}, 0:{n}])
"""


def _register(name: str, head: str, desc: str, impl: str, **fields) -> None:
    TensorIntrin.register_lazy(
        name, lambda: (_parse(head + desc, name, "desc", fields), _parse(head + impl, name, "impl", fields))
    )


def _parse(template: str, name: str, role: str, fields: dict) -> PrimFunc:
    return parse(template.format(name=name, role=role, **fields))


def register_load(name: str, op: str, m: int, n: int, dtype: str, src_scope: str, frag_scope: str) -> None:
    """``frag = src`` for an m x n tile of ``src_scope`` memory."""
    fields = dict(m=m, n=n, src_dtype=dtype, dst_dtype=dtype, src_scope=src_scope, dst_scope=frag_scope)
    _register(name, _COPY_HEAD, _COPY_DESC, _COPY_IMPL, op=op, frag="B", other="A", **fields)


def register_store(name: str, op: str, m: int, n: int, dtype: str, frag_scope: str, dst_scope: str) -> None:
    """``dst = frag`` for an m x n tile into ``dst_scope`` memory."""
    fields = dict(m=m, n=n, src_dtype=dtype, dst_dtype=dtype, src_scope=frag_scope, dst_scope=dst_scope)
    _register(name, _COPY_HEAD, _COPY_DESC, _COPY_IMPL, op=op, frag="A", other="B", **fields)


def register_fill(name: str, op: str, m: int, n: int, dtype: str, scope: str) -> None:
    """``frag = 0`` (the init of a reduction, after decompose_reduction)."""
    _register(name, _FILL_HEAD, _FILL_DESC, _FILL_IMPL, op=op, m=m, n=n, dtype=dtype, scope=scope)


def register_mma(
    name: str,
    op: str,
    shape: tuple[int, int, int],
    in_dtype: str,
    acc_dtype: str,
    scopes: tuple[str, str, str],
) -> None:
    """``C += A @ B`` over an m x n x k tile; inputs are cast to the accumulator's dtype when they differ."""
    m, n, k = shape
    cast = in_dtype != acc_dtype
    a_load = f'T.Cast("{acc_dtype}", A[vi, vk])' if cast else "A[vi, vk]"
    b_load = f'T.Cast("{acc_dtype}", B[vk, vj])' if cast else "B[vk, vj]"
    fields = dict(m=m, n=n, k=k, in_dtype=in_dtype, acc_dtype=acc_dtype, a_load=a_load, b_load=b_load)
    a_scope, b_scope, c_scope = scopes
    _register(
        name,
        _MMA_HEAD,
        _MMA_DESC,
        _MMA_IMPL,
        op=op,
        a_scope=a_scope,
        b_scope=b_scope,
        c_scope=c_scope,
        **fields,
    )
