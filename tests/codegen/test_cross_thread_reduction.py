"""Cross-thread reductions: a reduction loop bound to threadIdx, on C, the Metal simulator and nvcc.

Every schedule binds a reduction loop to a thread axis (directly, after rfactor,
or two of them) and is checked against the reference executor on random inputs:
on C (a plain loop), in the Metal host simulator with the simd reductions Metal
has (``simd_sum``, ...), and again in the simulator with the shuffle path that
CUDA uses (``simd_shuffle_down``, the same IR as ``__shfl_down_sync``), so the
masks and guards for extents that are not a multiple of 32 run here. CUDA sources
compile with nvcc where it exists; tests/codegen/test_gpu.py runs them on a GPU.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tir
from codegen import BuildError, build, registry
from codegen.build import generate_source
from codegen.cuda import nvcc
from schedule import Schedule
from tests.codegen.cross_thread_schedules import (
    cross_thread_layer_norm,
    cross_thread_softmax,
    softmax_row_in_shared,
)
from tests.schedule.util import random_args
from tir import te
from tir.functor import post_order_visit
from tir.transform.lower_cross_thread_reduction import ALLREDUCE, lower_cross_thread_reduction
from tir.transform.lower_thread_allreduce import lower_thread_allreduce
from tuner.workloads import layer_norm, softmax

REDUCERS = {
    "sum": ("T.{dtype}(0)", "B[vi] + A[vi, vk]"),
    "max": ('T.min_value("{dtype}")', "T.max(B[vi], A[vi, vk])"),
    "min": ('T.max_value("{dtype}")', "T.min(B[vi], A[vi, vk])"),
    "product": ("T.{dtype}(1)", "B[vi] * A[vi, vk]"),
}


def row_reduce(reducer: str, rows: int = 8, cols: int = 100, dtype: str = "float32") -> tir.PrimFunc:
    """B[i] = reduce over k of A[i, k]."""
    init, update = (s.format(dtype=dtype) for s in REDUCERS[reducer])
    return tir.parse(
        f"""
@T.prim_func
def main(A: T.Buffer(({rows}, {cols}), "{dtype}"), B: T.Buffer(({rows},), "{dtype}")):
    for i, k in T.grid({rows}, {cols}):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = {init}
            B[vi] = {update}
"""
    )


def inputs(func: tir.PrimFunc, reducer: str = "sum", seed: int = 0) -> list[np.ndarray]:
    arrays = random_args(func, seed)
    if reducer == "product" and arrays[0].dtype.kind == "f":
        arrays[0] = (1 + (arrays[0] - 0.5) * 0.02).astype(arrays[0].dtype)  # a product that stays near 1
    for array in arrays[1:]:
        array[...] = np.nan if array.dtype.kind == "f" else -7
    return arrays


@pytest.fixture(params=["c", "metal-simd", "metal-shuffle"])
def runner(request, monkeypatch):
    """Builds and runs a module on one of the three CI paths."""
    if request.param == "metal-shuffle":
        metal = registry.BACKENDS["metal"]
        monkeypatch.setitem(registry.BACKENDS, "metal", dataclasses.replace(metal, warp_reductions=False))
    target, device = ("c", None) if request.param == "c" else ("metal", "sim")

    def run(mod, arrays):
        build(mod, target, device=device)["main"](*arrays)

    return run


def check(sch: Schedule, original, runner, reducer: str = "sum", rtol: float = 1e-5) -> None:
    """The scheduled module on the target equals the reference executor on the original."""
    func = original if isinstance(original, tir.PrimFunc) else original.main_function()
    expected = inputs(func, reducer)
    tir.interpret(func, *expected)
    got = inputs(func, reducer)
    runner(sch.mod, got)
    for param, want, have in zip(func.params, expected, got):
        np.testing.assert_allclose(have, want, rtol=rtol, atol=1e-5, err_msg=f"buffer {param.name}")


def bind_rows_and_threads(func, threads: int, rows_per_block: int = 1) -> Schedule:
    """Rows over blockIdx.x (and threadIdx.y), the reduction split with its inner part on threadIdx.x."""
    sch = Schedule(func)
    i, k = sch.get_loops(sch.get_block("B"))
    if rows_per_block > 1:
        i0, i1 = sch.split(i, [None, rows_per_block])
        sch.bind(i0, "blockIdx.x")
        sch.bind(i1, "threadIdx.y")
        sch.reorder(i1, k)
    else:
        sch.bind(i, "blockIdx.x")
    _, k1 = sch.split(k, [None, threads])
    sch.bind(k1, "threadIdx.x")
    return sch


# ---------------------------------------------------------------- one group per block


@pytest.mark.parametrize("threads", [32, 24, 7, 64, 100, 256])
def test_row_sum_over_thread_counts(runner, threads):
    func = row_reduce("sum")
    check(bind_rows_and_threads(func, threads), func, runner)


@pytest.mark.parametrize("reducer", ["max", "min", "product"])
@pytest.mark.parametrize("threads", [32, 48])
def test_every_reducer(runner, reducer, threads):
    func = row_reduce(reducer)
    check(bind_rows_and_threads(func, threads), func, runner, reducer)


@pytest.mark.parametrize("reducer", ["sum", "max"])
def test_integer_reductions(runner, reducer):
    func = row_reduce(reducer, dtype="int32")
    check(bind_rows_and_threads(func, 40), func, runner, reducer)


# ---------------------------------------------------------------- several groups per block


@pytest.mark.parametrize(("threads", "rows"), [(8, 4), (32, 4), (16, 3), (24, 4), (48, 2), (64, 2)])
def test_rows_on_thread_y_reduce_on_thread_x(runner, threads, rows):
    """Segments of a warp (8, 16), whole warps (32), and the shared-memory tree (24, 48)."""
    func = row_reduce("sum", rows=12)
    check(bind_rows_and_threads(func, threads, rows), func, runner)


def test_reduction_on_thread_y_with_rows_on_thread_x(runner):
    """The reduced axis is outside a spatial one: the shared-memory tree."""
    func = row_reduce("max", rows=16, cols=40)
    sch = Schedule(func)
    i, k = sch.get_loops(sch.get_block("B"))
    i0, i1 = sch.split(i, [None, 8])
    _, k1 = sch.split(k, [None, 5])
    sch.bind(i0, "blockIdx.x")
    sch.bind(i1, "threadIdx.x")
    sch.bind(k1, "threadIdx.y")
    check(sch, func, runner, "max")


def test_two_thread_axes_reduce_together(runner):
    func = row_reduce("sum", cols=128)
    sch = Schedule(func)
    i, k = sch.get_loops(sch.get_block("B"))
    sch.bind(i, "blockIdx.x")
    _, ky, kx = sch.split(k, [None, 4, 16])
    sch.bind(ky, "threadIdx.y")
    sch.bind(kx, "threadIdx.x")
    check(sch, func, runner)


def test_after_rfactor(runner):
    """rfactor the split reduction, then bind the final reduction's loop to threadIdx.x."""
    func = row_reduce("sum", cols=256)
    sch = Schedule(func)
    block = sch.get_block("B")
    i, k = sch.get_loops(block)
    _, k1 = sch.split(k, [None, 64])
    rf = sch.rfactor(k1, 0)
    sch.bind(sch.get_loops(block)[0], "blockIdx.x")
    sch.bind(sch.get_loops(block)[1], "threadIdx.x")
    sch.compute_at(rf, sch.get_loops(block)[1])
    sch.set_scope(rf, 0, "local")
    check(sch, func, runner)


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    reducer=st.sampled_from(["sum", "max", "min"]),
    cols=st.sampled_from([37, 64, 100]),
    threads=st.integers(1, 64),
    rows_per_block=st.sampled_from([1, 2, 3, 4]),
    reduce_on_y=st.booleans(),
)
def test_random_thread_bound_reductions(runner, reducer, cols, threads, rows_per_block, reduce_on_y):
    """Hypothesis draws the reduction's thread count, rows per block and which axis reduces."""
    func = row_reduce(reducer, rows=12, cols=cols)
    sch = Schedule(func)
    i, k = sch.get_loops(sch.get_block("B"))
    i0, i1 = sch.split(i, [None, rows_per_block])
    _, k1 = sch.split(k, [None, threads])
    sch.bind(i0, "blockIdx.x")
    sch.bind(i1, "threadIdx.x" if reduce_on_y else "threadIdx.y")
    sch.bind(k1, "threadIdx.y" if reduce_on_y else "threadIdx.x")
    check(sch, func, runner, reducer)


# ---------------------------------------------------------------- softmax


@pytest.mark.parametrize("threads", [32, 100, 128])
def test_softmax_with_cross_thread_max_and_sum(runner, threads):
    sch = cross_thread_softmax(threads)
    check(sch, softmax(6, 200), runner)


@pytest.mark.parametrize("threads, lanes", [(32, 4), (50, 4), (128, 1)])
def test_softmax_reading_its_row_once_into_shared_memory(runner, threads, lanes):
    check(softmax_row_in_shared(threads, lanes=lanes), softmax(6, 200), runner)


def test_the_shared_row_is_one_float4_load_per_thread_and_the_passes_read_it():
    source, _ = generate_source(softmax_row_in_shared(256, 64, 1024).mod, "cuda")
    assert (
        "*(float4*)(A_shared + threadIdx_x * 4) = *(const float4*)(A + blockIdx_x * 1024 + threadIdx_x * 4);"
        in source
    )
    # A itself is read once; the declaration of A_shared and the three passes name the copy.
    assert not re.search(r"\bA\[", source) and source.count("(A + ") == 1 and source.count("A_shared[") == 4


@pytest.mark.parametrize("threads", [64, 96])
def test_layer_norm_with_cross_thread_sums(runner, threads):
    check(cross_thread_layer_norm(threads), layer_norm(6, 200), runner, rtol=1e-4)


def test_metal_uses_simd_reductions_and_cuda_shuffles():
    metal, _ = generate_source(cross_thread_softmax(128).mod, "metal")
    cuda, _ = generate_source(cross_thread_softmax(128).mod, "cuda")
    assert "simd_max(" in metal and "simd_sum(" in metal and "simd_shuffle" not in metal
    assert "__shfl_down_sync(4294967295u" in cuda and "__shfl_sync(" not in cuda  # 4 warps: no broadcast
    assert cuda.count("__syncthreads();") == 2 + 2 * 2  # two hand-overs, two per all-reduce of 4 warps


def test_c_keeps_the_reduction_a_loop():
    source, _ = generate_source(cross_thread_softmax(128).mod, "c")
    assert "shfl" not in source and "in_thread" not in source


# ---------------------------------------------------------------- CUDA compiles


@pytest.mark.skipif(not nvcc.nvcc_available(), reason="needs nvcc (the CUDA toolkit)")
@pytest.mark.parametrize("case", ["softmax", "ragged", "segments", "tree", "int"])
def test_cuda_sources_compile_with_nvcc(case):
    schedules = {
        "softmax": lambda: cross_thread_softmax(100),
        "ragged": lambda: bind_rows_and_threads(row_reduce("min"), 100),
        "segments": lambda: bind_rows_and_threads(row_reduce("sum", rows=12), 8, 4),
        "tree": lambda: bind_rows_and_threads(row_reduce("sum", rows=12), 24, 4),
        "int": lambda: bind_rows_and_threads(row_reduce("max", dtype="int32"), 64),
    }
    source, _ = generate_source(schedules[case]().mod, "cuda")
    assert nvcc.compile_with_nvcc(source, "sm_90")[:4] == b"\x7fELF"


# ---------------------------------------------------------------- what cannot be lowered


def test_decomposed_reduction_bound_to_threads_is_a_build_error():
    sch = bind_rows_and_threads(row_reduce("sum"), 32)
    sch.decompose_reduction(sch.get_block("B"), sch.get_loops(sch.get_block("B"))[1])
    with pytest.raises(BuildError, match="block 'B' reduces across threads.*no T.init"):
        build(sch.mod, "metal", device="sim")


def test_spatial_loop_inside_the_thread_reduction_is_a_build_error():
    func = row_reduce("sum", rows=8, cols=64)
    sch = Schedule(func)
    i, k = sch.get_loops(sch.get_block("B"))
    i0, i1 = sch.split(i, [None, 2])
    sch.bind(i0, "blockIdx.x")
    sch.bind(k, "threadIdx.x")
    sch.reorder(k, i1)
    with pytest.raises(BuildError, match="reduction loops are not the innermost loops"):
        generate_source(sch.mod, "cuda")
    check(sch, func, lambda mod, arrays: build(mod, "c")["main"](*arrays))


def test_all_reduce_under_a_condition_is_refused():
    """Shuffles and barriers are collective: an all-reduce under `if` would hang or read garbage."""
    tx = tir.Var("threadIdx_x", "int32")
    cross = tir.Buffer("cross_thread_B", (tir.IntImm(1, "int32"),), "float32", "local")
    zero = tir.IntImm(0, "int32")
    call = tir.Call("float32", ALLREDUCE, (tir.FloatImm(1.0, "float32"), tir.StringImm("sum"), tx))
    body = tir.IfThenElse(tx < 16, tir.BufferStore(cross, call, (zero,)))
    loop = tir.For(tx, zero, tir.IntImm(32, "int32"), tir.ForKind.THREAD_BINDING, body, "threadIdx.x")
    func = tir.PrimFunc((), loop)
    with pytest.raises(ValueError, match="into B is not reached by every thread.*under `if"):
        lower_thread_allreduce(func)


# ---------------------------------------------------------------- on an NVIDIA GPU (pytest -m gpu)

GPU_CASES = {
    "softmax_128": (lambda: cross_thread_softmax(128), lambda: softmax(6, 200), "sum"),
    "softmax_100": (lambda: cross_thread_softmax(100), lambda: softmax(6, 200), "sum"),
    "layer_norm_96": (lambda: cross_thread_layer_norm(96), lambda: layer_norm(6, 200), "sum"),
    "sum_24": (lambda: bind_rows_and_threads(row_reduce("sum"), 24), lambda: row_reduce("sum"), "sum"),
    "sum_100": (lambda: bind_rows_and_threads(row_reduce("sum"), 100), lambda: row_reduce("sum"), "sum"),
    "max_256": (lambda: bind_rows_and_threads(row_reduce("max"), 256), lambda: row_reduce("max"), "max"),
    "product_48": (
        lambda: bind_rows_and_threads(row_reduce("product"), 48),
        lambda: row_reduce("product"),
        "product",
    ),
    "int_max_40": (
        lambda: bind_rows_and_threads(row_reduce("max", dtype="int32"), 40),
        lambda: row_reduce("max", dtype="int32"),
        "max",
    ),
    "segments_8x4": (
        lambda: bind_rows_and_threads(row_reduce("sum", rows=12), 8, 4),
        lambda: row_reduce("sum", rows=12),
        "sum",
    ),
    "segments_16x3": (
        lambda: bind_rows_and_threads(row_reduce("sum", rows=12), 16, 3),
        lambda: row_reduce("sum", rows=12),
        "sum",
    ),
    "tree_24x4": (
        lambda: bind_rows_and_threads(row_reduce("min", rows=12), 24, 4),
        lambda: row_reduce("min", rows=12),
        "min",
    ),
}


@pytest.mark.gpu
@pytest.mark.parametrize("case", sorted(GPU_CASES))
def test_cross_thread_reductions_on_cuda(case):
    from codegen import RuntimeUnavailableError

    schedule, original, reducer = GPU_CASES[case]
    try:
        build(row_reduce("sum"), "cuda").loaded  # noqa: B018
    except RuntimeUnavailableError as error:
        pytest.skip(f"no CUDA runtime here: {error}")
    check(schedule(), original(), lambda mod, arrays: build(mod, "cuda")["main"](*arrays), reducer)


# ---------------------------------------------------------------- one identity table


@pytest.mark.parametrize("reducer", ["max", "min"])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_te_reductions_start_from_the_identity_the_lowering_uses(runner, reducer, dtype):
    """te.max/te.min start from T.min_value/T.max_value, TVM's identities, and so does each
    thread's partial result: the write-back stores the reduced value alone instead of combining
    it with the init once more (which two tables, -inf and min_value, used to cause)."""
    A = te.placeholder((8, 100), dtype, name="A")
    k = te.reduce_axis((0, 100), name="k")
    te_reduce = te.max if reducer == "max" else te.min
    B = te.compute((8,), lambda i: te_reduce(A[i, k], axis=k), name="B")
    func = te.create_prim_func([A, B])
    sch = bind_rows_and_threads(func, 32)
    lowered = lower_cross_thread_reduction(sch.mod["main"])
    write_backs = [b for b in _blocks(lowered.body) if b.name == "B_write_back"]
    assert len(write_backs) == 1 and isinstance(write_backs[0].body.value, tir.BufferLoad)
    check(sch, func, runner, reducer)


def _blocks(stmt) -> list[tir.Block]:
    found: list[tir.Block] = []
    post_order_visit(stmt, lambda n: found.append(n) if isinstance(n, tir.Block) else None)
    return found
