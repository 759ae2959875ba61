"""The tensor-expression front end, TVM's ``te``: describe each tensor as a function of its
indices and let ``create_prim_func`` write the TensorIR blocks.

>>> from tir import te
>>> A = te.placeholder((8, 4), "float32", name="A")
>>> k = te.reduce_axis((0, 4), name="k")
>>> B = te.compute((8,), lambda i: te.sum(A[i, k] * 2.0, axis=k), name="B")
>>> func = te.create_prim_func([A, B])
>>> print(func.script())  # doctest: +NORMALIZE_WHITESPACE
# from tir import T
<BLANKLINE>
@T.prim_func
def main(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8,), "float32")):
    T.func_attr({"tir.noalias": True})
    # with T.block("root"):
    for i, k in T.grid(8, 4):
        with T.block("B"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            T.reads(A[v_i, v_k])
            T.writes(B[v_i])
            with T.init():
                B[v_i] = T.float32(0.0)
            B[v_i] = B[v_i] + A[v_i, v_k] * T.float32(2.0)

The blocks are those TVM makes (names, iterator kinds, ``T.init``); see create_prim_func.py.
"""

from __future__ import annotations

from ..index_map import IndexMap
from .axis import Axis, reduce_axis
from .create_prim_func import create_prim_func
from .reduction import CommReducer, Reduction, comm_reducer, max, min, sum
from .tensor import ComputeOp, Tensor, compute, placeholder, var
from .tensor import const_value as const

AXIS_SEPARATOR = IndexMap.AXIS_SEPARATOR  # TVM's te.AXIS_SEPARATOR, the marker in a layout map's outputs

__all__ = [
    "AXIS_SEPARATOR",
    "Axis",
    "CommReducer",
    "ComputeOp",
    "Reduction",
    "Tensor",
    "comm_reducer",
    "compute",
    "const",
    "create_prim_func",
    "max",
    "min",
    "placeholder",
    "reduce_axis",
    "sum",
    "var",
]
