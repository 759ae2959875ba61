"""Programs a target cannot run fail at build with a message naming the construct and the kernel."""

from __future__ import annotations

import numpy as np
import pytest

from codegen import BuildError, Target, build
from codegen.build import generate_source
from codegen.target import TargetError
from schedule import Schedule
from tests.codegen.seed_kernels import SEED_KERNELS, vector_add_program
from tir import T
from tuner import workloads


@T.prim_func
def axpy64(A: T.Buffer((64,), "float64"), B: T.Buffer((64,), "float64")):
    for i in T.thread_binding(64, thread="threadIdx.x"):
        with T.block("B"):
            vi = T.axis.spatial(64, i)
            B[vi] = A[vi] * T.float64(2)


def test_dtype_the_target_lacks():
    with pytest.raises(
        BuildError, match=r"function axpy64 uses float64, which the metal target does not have"
    ):
        generate_source(axpy64, "metal")


def test_thread_tag_with_two_extents_names_both_loops():
    sch = Schedule(vector_add_program(256))
    block = sch.get_block("C")
    (i,) = sch.get_loops(block)
    i0, i1 = sch.split(i, [None, 128])
    sch.bind(i0, "blockIdx.x")
    sch.bind(i1, "threadIdx.x")
    cache = sch.cache_read(block, 0, "shared")
    sch.compute_at(cache, i1)
    _, fetch = sch.split(sch.get_loops(cache)[-1], [None, 64])
    sch.bind(fetch, "threadIdx.x")
    with pytest.raises(BuildError, match=r"function main: .*threadIdx.x.*'i_1' has extent 128.*has 64"):
        generate_source(sch.mod, "cuda")


def big_shared_matmul(tile: int):
    sch = Schedule(workloads.matmul(256, 256, 256))
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, [None, tile])
    j0, j1 = sch.split(j, [None, 16])
    sch.reorder(i0, j0, k, i1, j1)
    sch.bind(i0, "blockIdx.x")
    sch.bind(j0, "blockIdx.y")
    cache = sch.cache_read(block, 0, "shared")
    sch.compute_at(cache, j0)
    return sch.mod


def test_kernel_over_threadgroup_memory_names_the_limit():
    # A_shared holds tile rows x 256 floats: 64 rows = 64 KiB, over Metal's 32 KiB and CUDA's 48 KiB
    for target, limit in (("metal", "32768"), ("cuda", "49152")):
        with pytest.raises(
            BuildError, match=rf"kernel main_kernel0 declares 65536 bytes .* limit of {limit}"
        ):
            generate_source(big_shared_matmul(64), target)
    generate_source(big_shared_matmul(16), "metal")


def test_kernel_over_thread_limit():
    sch = Schedule(vector_add_program(4096))
    (i,) = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, [None, 2048])
    sch.bind(i0, "blockIdx.x")
    sch.bind(i1, "threadIdx.x")
    with pytest.raises(BuildError, match=r"kernel main_kernel0 launches 2048 threads .* limit of 1024"):
        generate_source(sch.mod, "cuda")


def test_loop_outside_every_kernel():
    sch = Schedule(vector_add_program(256))
    (i,) = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, [None, 128])
    sch.bind(i1, "threadIdx.x")
    with pytest.raises(BuildError, match=r"loop i_0 is outside every thread-bound loop"):
        generate_source(sch.mod, "cuda")


def test_unknown_target_and_device():
    with pytest.raises(TargetError, match="unknown target 'vulkan'"):
        Target.parse("vulkan")
    with pytest.raises(BuildError, match="device 'sim' is not available for target 'cuda'"):
        build(SEED_KERNELS["vector_add"](256), "cuda", device="sim")


def test_fast_math_is_a_metal_option():
    assert Target.parse("metal -fast-math").fast_math
    assert not Target.parse("metal").fast_math
    with pytest.raises(TargetError, match="-fast-math is a Metal option; target 'cuda' does not take it"):
        Target.parse("cuda -fast-math")


def test_wrong_arguments_are_refused_before_running():
    module = build(SEED_KERNELS["vector_add"](256), "c")
    a = np.ones(256, "float32")
    with pytest.raises(TypeError, match=r"main takes 3 arrays \(A, B, C\); got 2"):
        module["main"](a, a)
    with pytest.raises(
        ValueError, match=r"argument 2 \(C\) must be a float32 array of shape \(256,\); got float64"
    ):
        module["main"](a, a, np.ones(256))


def test_simulator_never_reports_timings():
    module = build(SEED_KERNELS["vector_add"](256), "metal", device="sim")
    a = np.ones(256, "float32")
    with pytest.raises(Exception, match="never reports timings"):
        module.benchmark("main", a, a, a)
