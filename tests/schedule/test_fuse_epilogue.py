"""fuse_reduction_epilogue: expected scripts, numbers, trace round trips, refused requests."""

from __future__ import annotations

import pytest

import tir
from schedule import Schedule
from schedule.fuse_epilogue import EpilogueFusionError
from tir import T

from .util import assert_fails_unchanged, assert_same_numbers, verify_trace_roundtrip


@T.prim_func
def matmul_bias(
    A: T.Buffer((16, 16), "int8"),
    B: T.Buffer((16, 16), "int8"),
    C: T.Buffer((16, 16), "int32"),
    D: T.Buffer((16, 16), "int32"),
):
    temp = T.alloc_buffer((16, 16), "int32")
    for i, j, k in T.grid(16, 16, 16):
        with T.block("multiply"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                temp[vi, vj] = 0
            temp[vi, vj] = temp[vi, vj] + T.Cast("int32", A[vi, vk]) * T.Cast("int32", B[vj, vk])
    for i, j in T.grid(16, 16):
        with T.block("add"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = temp[vi, vj] + C[vi, vj]


@T.prim_func
def matmul_bias_fused(
    A: T.Buffer((16, 16), "int8"),
    B: T.Buffer((16, 16), "int8"),
    C: T.Buffer((16, 16), "int32"),
    D: T.Buffer((16, 16), "int32"),
):
    temp = T.alloc_buffer((16, 16), "int32")  # noqa: F841 - kept, as TVM keeps it
    for i, j, k in T.grid(16, 16, 16):
        with T.block("multiply"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(C[vi, vj], A[vi, vk], B[vj, vk])
            T.writes(D[vi, vj])
            with T.init():
                D[vi, vj] = C[vi, vj]
            D[vi, vj] = D[vi, vj] + T.Cast("int32", A[vi, vk]) * T.Cast("int32", B[vj, vk])


@T.prim_func
def max_then_clamp_below(
    A: T.Buffer((8, 8), "float32"), C: T.Buffer((8,), "float32"), D: T.Buffer((8,), "float32")
):
    m = T.alloc_buffer((8,))
    for i, k in T.grid(8, 8):
        with T.block("max"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                m[vi] = T.float32(-1e30)
            m[vi] = T.max(m[vi], A[vi, vk])
    for i in range(8):
        with T.block("clamp"):
            vi = T.axis.spatial(8, i)
            D[vi] = T.max(C[vi], m[vi])


@T.prim_func
def two_epilogues(A: T.Buffer((8, 8), "float32"), D: T.Buffer((8,), "float32"), E: T.Buffer((8,), "float32")):
    s = T.alloc_buffer((8,))
    for i, k in T.grid(8, 8):
        with T.block("sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                s[vi] = T.float32(0)
            s[vi] = s[vi] + A[vi, vk]
    for i in range(8):
        with T.block("D"):
            vi = T.axis.spatial(8, i)
            D[vi] = s[vi] + T.float32(1)
    for i in range(8):
        with T.block("E"):
            vi = T.axis.spatial(8, i)
            E[vi] = s[vi] * T.float32(2)


@T.prim_func
def squared_bias(A: T.Buffer((8, 8), "float32"), D: T.Buffer((8,), "float32")):
    s = T.alloc_buffer((8,))
    for i, k in T.grid(8, 8):
        with T.block("sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                s[vi] = T.float32(0)
            s[vi] = s[vi] + A[vi, vk]
    for i in range(8):
        with T.block("D"):
            vi = T.axis.spatial(8, i)
            D[vi] = s[vi] + s[vi]


def test_fuse_reduction_epilogue_bias_add():
    sch = Schedule(matmul_bias)
    sch.fuse_reduction_epilogue("multiply", "add")
    tir.assert_structural_equal(sch.mod["main"], matmul_bias_fused)
    verify_trace_roundtrip(sch, matmul_bias)
    assert_same_numbers(matmul_bias, sch.mod["main"])


def test_fuse_reduction_epilogue_of_a_max():
    sch = Schedule(max_then_clamp_below)
    sch.fuse_reduction_epilogue(sch.get_block("max"), sch.get_block("clamp"))
    assert sch.block_names() == ["max"]
    verify_trace_roundtrip(sch, max_then_clamp_below)
    assert_same_numbers(max_then_clamp_below, sch.mod["main"])


@pytest.mark.parametrize(
    "func, epilogue, phrase",
    [
        (two_epilogues, "D", "also read by ['E']"),
        (two_epilogues, "E", "by the reduction's operator"),
        (squared_bias, "D", "reads s once"),
    ],
)
def test_fuse_reduction_epilogue_refuses(func, epilogue, phrase):
    sch = Schedule(func)
    reduction, block = sch.get_block("sum"), sch.get_block(epilogue)
    assert_fails_unchanged(sch, EpilogueFusionError, phrase, sch.fuse_reduction_epilogue, reduction, block)
