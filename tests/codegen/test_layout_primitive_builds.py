"""The layout and staging primitives' results build for C and compute what the executor computes,
and read_at/write_at's copies print as CUDA with the barriers around the shared tiles."""

from __future__ import annotations

import numpy as np
import pytest

import tir
from codegen import build
from codegen.build import Target, generate_source
from codegen.cuda.nvcc import compile_with_nvcc, nvcc_path
from schedule import Schedule
from tests.schedule import test_decompose_padding as padding_cases
from tests.schedule import test_layout_transformation as layout_cases
from tests.schedule import test_loop_partition as partition_cases
from tests.schedule import test_pad_einsum as einsum_cases
from tests.schedule import test_read_write_at as stage_cases
from tests.schedule import test_reindex as reindex_cases
from tests.schedule import test_rolling_buffer as rolling_cases
from tests.schedule.util import random_args


def _padded_layout():
    sch = Schedule(layout_cases.double14)
    sch.transform_layout("B", "B", lambda i: (i // 4, i % 4), pad_value=7)
    return layout_cases.double14, sch


def _fused_block_layout():
    sch = Schedule(layout_cases.sum_3d)
    sch.transform_block_layout("B", lambda i, j, k: (i * 6 + j, k))
    return layout_cases.sum_3d, sch


def _reindexed_and_packed():
    sch = Schedule(reindex_cases.matmul)
    sch.reindex(sch.get_block("C"), ("write", 0))
    sch.reindex_cache_read("C", 1, "global", lambda i, j, k: (j // 4, k, j % 4))
    return reindex_cases.matmul, sch


def _rolled():
    sch = Schedule(rolling_cases.two_box_sums)
    _, i, _ = sch.get_loops(sch.get_block("C"))
    i_0, _ = sch.split(i, [2, 4])
    sch.compute_at(sch.get_block("B"), i_0)
    sch.rolling_buffer(sch.get_block("B"), 0)
    return rolling_cases.two_box_sums, sch


def _partitioned():
    sch = Schedule(partition_cases.scale)
    sch.loop_partition(sch.get_loops(sch.get_block("B"))[0], [3, 1])
    return partition_cases.scale, sch


def _padded_einsum():
    sch = Schedule(einsum_cases.matmul)
    sch.pad_einsum(sch.get_block("C"), [4, 8, 8])
    return einsum_cases.matmul, sch


def _decomposed_padding():
    sch = Schedule(padding_cases.pad_then_pool)
    pad = sch.get_block("padded")
    sch.decompose_padding(pad, sch.get_loops(pad)[0])
    return padding_cases.pad_then_pool, sch


def _staged_gpu_matmul():
    sch = Schedule(stage_cases.matmul)
    block, ko, tj = stage_cases._gpu_tiled(sch)
    sch.read_at(ko, block, 0, "shared")
    sch.read_at(ko, block, 1, "shared")
    sch.write_at(tj, block, 0, "local")
    return stage_cases.matmul, sch


CASES = [
    _padded_layout,
    _fused_block_layout,
    _reindexed_and_packed,
    _rolled,
    _partitioned,
    _padded_einsum,
    _decomposed_padding,
    _staged_gpu_matmul,
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.strip("_"))
def test_c_build_computes_what_the_executor_computes(case):
    before, sch = case()
    args = random_args(before, seed=5)
    expected = [a.copy() for a in args]
    tir.interpret(before, *expected)
    build(sch.mod, "c")["main"](*args)
    for param, got, want in zip(before.params, args, expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=f"buffer {param.name}")


def test_read_at_tiles_print_as_shared_memory_between_barriers():
    _, sch = _staged_gpu_matmul()
    source, _ = generate_source(sch.mod, Target.parse("cuda"), None, False)
    assert "__shared__ float A_shared[128];" in source and "__shared__ float B_shared[128];" in source
    assert source.count("__syncthreads();") == 2
    if nvcc_path() is not None:
        assert compile_with_nvcc(source, "sm_90", "ptx")


@pytest.mark.gpu
def test_staged_gpu_matmul_on_cuda():
    """On an NVIDIA GPU (``pytest -m gpu``): the read_at/write_at matmul runs and is right."""
    from codegen import RuntimeUnavailableError

    before, sch = _staged_gpu_matmul()
    args = random_args(before, seed=7)
    expected = [a.copy() for a in args]
    tir.interpret(before, *expected)
    try:
        module = build(sch.mod, "cuda")
        module.loaded  # noqa: B018
    except RuntimeUnavailableError as error:
        pytest.skip(f"no CUDA runtime here: {error}")
    module["main"](*args)
    np.testing.assert_allclose(args[2], expected[2], rtol=1e-4, atol=1e-4)
