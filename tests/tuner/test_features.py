"""Feature vectors of candidates (tuner/features.py): names, values counted by hand, speed.

Values are checked against counts worked out by hand for the seed notebook's
shared-memory matmul and a one-thread-per-output kernel at 1024^3, and for small
lowered kernels written out in TVMScript whose memory behaviour is known (coalesced
or strided global accesses, bank conflicts of a given degree, barriers, kernels).
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

import tir
from codegen.pipeline import FEATURE_STAGE, lower_for_target
from codegen.target import Target
from schedule import Schedule
from tests.schedule.seed_notebook import MatmulSmall, MyModuleMatmul, blocking_with_shared
from tuner.features import (
    FEATURE_LENGTH,
    FEATURE_NAMES,
    NEST_KIND_CODES,
    extract_batch,
    extract_features,
    lower_for_features,
)

CUDA = Target.parse("cuda")
CPU = Target.parse("c")


def log2p(x: float) -> float:
    return math.log2(1 + x)


def named(vector: np.ndarray) -> dict[str, float]:
    return dict(zip(FEATURE_NAMES, vector.tolist()))


def seed_shared_matmul() -> tir.PrimFunc:
    """The notebook's blocking_with_shared(sch, 8, 8, 8, 8, 8) at 1024^3."""
    return blocking_with_shared(Schedule(MyModuleMatmul), 8, 8, 8, 8, 8).mod["main"]


def one_thread_per_output_matmul() -> tir.PrimFunc:
    sch = Schedule(MyModuleMatmul)
    i, j, _ = sch.get_loops(sch.get_block("C"))
    j_0, j_1 = sch.split(j, [None, 256])
    sch.bind(i, "blockIdx.x")
    sch.bind(j_0, "blockIdx.y")
    sch.bind(j_1, "threadIdx.x")
    return sch.mod["main"]


@pytest.fixture(scope="module")
def seed() -> dict[str, float]:
    return named(extract_features(seed_shared_matmul(), CUDA))


@pytest.fixture(scope="module")
def naive() -> dict[str, float]:
    return named(extract_features(one_thread_per_output_matmul(), CUDA))


# ---------------------------------------------------------------- shape


def test_names_and_length_agree():
    assert len(FEATURE_NAMES) == FEATURE_LENGTH == len(set(FEATURE_NAMES))
    vector = extract_features(seed_shared_matmul(), CUDA)
    assert vector.dtype == np.float32 and vector.shape == (FEATURE_LENGTH,)
    assert np.all(np.isfinite(vector))


def test_batch_rows_are_the_single_vectors():
    funcs = [seed_shared_matmul(), one_thread_per_output_matmul()]
    batch = extract_batch(funcs, "cuda")
    assert batch.shape == (2, FEATURE_LENGTH) and batch.dtype == np.float32
    for row, func in zip(batch, funcs):
        np.testing.assert_array_equal(row, extract_features(func, CUDA))
    assert not np.array_equal(batch[0], batch[1])
    assert extract_batch([], CUDA).shape == (0, FEATURE_LENGTH)


# ---------------------------------------------------------------- the seed's matmul, counted by hand


def test_seed_shared_matmul_counts(seed):
    assert seed["is_gpu"] == 1
    assert seed["log_flops"] == pytest.approx(31)  # 2 * 1024^3
    assert seed["log_grid_size"] == pytest.approx(log2p(16 * 16))
    assert seed["log_threads_per_group"] == pytest.approx(log2p(64))
    assert seed["vector_lanes"] == 4
    # Two 64x8 float caches per thread block; an 8x8 float accumulator per thread.
    assert seed["log_shared_bytes_per_group"] == pytest.approx(log2p(2 * 512 * 4))
    assert seed["shared_limit_fraction"] == pytest.approx(4096 / CUDA.max_shared_memory_bytes)
    assert seed["log_local_bytes_per_thread"] == pytest.approx(log2p(64 * 4))
    # A and B are each read once per thread block of the other dimension (16 times).
    assert seed["log_global_load_bytes"] == pytest.approx(log2p(2 * 16 * 1024 * 1024 * 4), abs=1e-4)
    assert seed["log_global_store_bytes"] == pytest.approx(log2p(1024 * 1024 * 4), abs=1e-4)
    # Two barriers per k_0 step (128 of them) in every thread block.
    assert seed["log_barriers_per_group"] == pytest.approx(log2p(2 * 128))
    # Per warp, A_shared is read at 4 words of one bank and B_shared at 8 words in 4 banks.
    assert 2.5 < seed["shared_bank_conflict_ways"] < 3.0
    assert seed["global_contiguous_fraction"] == 1


def test_seed_and_naive_differ_in_the_expected_directions(seed, naive):
    assert naive["log_shared_bytes_per_group"] == 0 < seed["log_shared_bytes_per_group"]
    assert naive["log_threads_per_group"] == pytest.approx(log2p(256))
    assert naive["vector_lanes"] == 1 < seed["vector_lanes"]
    assert naive["log_barriers_per_group"] == 0 < seed["log_barriers_per_group"]
    assert naive["log_local_bytes_per_thread"] == 0 < seed["log_local_bytes_per_thread"]
    assert naive["log_grid_size"] == pytest.approx(log2p(1024 * 4))
    # Every multiply-add loads A, B and C from global memory and stores C there.
    assert naive["log_global_load_bytes"] == pytest.approx(log2p(3 * 1024**3 * 4), abs=1e-4)
    assert seed["log_arithmetic_intensity"] > naive["log_arithmetic_intensity"] + 3
    assert seed["log_global_reuse"] < naive["log_global_reuse"]
    assert seed["log_flops"] == naive["log_flops"]


def test_given_flops_replace_the_counted_ones():
    func = seed_shared_matmul()
    counted = named(extract_features(func, CUDA))
    assert counted["log_flops"] == pytest.approx(log2p(tir.flop_count(func)))
    given = named(extract_features(func, CUDA, flops=1e6))
    assert given["log_flops"] == pytest.approx(log2p(1e6))
    assert given["log_arithmetic_intensity"] < counted["log_arithmetic_intensity"]


def test_scheduled_lowered_and_codegen_ready_forms_agree():
    func = seed_shared_matmul()
    scheduled = extract_features(func, CUDA)
    np.testing.assert_array_equal(scheduled, extract_features(lower_for_features(func, CUDA), CUDA))
    # After the code generators' passes the vectorized loops are Ramps: same memory features.
    ready = named(extract_features(lower_for_target(func, CUDA), CUDA))
    for name, value in named(scheduled).items():
        if name != "predicated_fraction":
            assert ready[name] == pytest.approx(value, abs=1e-5), name


def test_the_feature_stage_is_the_pipeline_prefix_with_or_without_the_planning_memo():
    """The features read the pipeline stopped before FEATURE_STAGE; the memoized planning (no
    block regions) gives the same flat IR as running every pass with a dump watching."""
    func = seed_shared_matmul()
    staged = lower_for_target(func, CUDA, stop_before=FEATURE_STAGE)
    passes = []
    watched = lower_for_target(func, CUDA, lambda name, _: passes.append(name), stop_before=FEATURE_STAGE)
    assert FEATURE_STAGE not in passes and "plan_buffer_allocation" in passes
    assert tir.structural_equal(staged, watched)
    np.testing.assert_array_equal(extract_features(staged, CUDA), extract_features(func, CUDA))
    with pytest.raises(ValueError, match="has no pass 'vectorise_loop'; its passes are"):
        lower_for_target(func, CUDA, stop_before="vectorise_loop")


# ---------------------------------------------------------------- small lowered kernels

COPY = """
@T.prim_func
def main(A: T.Buffer((4096,), "float32"), B: T.Buffer((4096,), "float32")):
    for bx in T.thread_binding(64, thread="blockIdx.x"):
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            B[{index}] = A[{index}]
"""


@pytest.mark.parametrize(
    "index, contiguous, efficiency",
    [("bx * 64 + tx", 1.0, 1.0), ("tx * 64 + bx", 0.0, 4 / 32), ("bx * 64 + tx // 2", 0.0, 1.0)],
)
def test_global_access_patterns(index, contiguous, efficiency):
    features = named(extract_features(tir.parse(COPY.format(index=index)), CUDA))
    assert features["global_contiguous_fraction"] == pytest.approx(contiguous)
    # A warp reads 32 floats: one 128-byte run, 32 sectors, or 16 floats read twice each.
    assert features["global_transaction_efficiency"] == pytest.approx(efficiency)
    assert features["log_global_load_bytes"] == pytest.approx(log2p(4096 * 4))
    assert features["log_threads_per_group"] == pytest.approx(log2p(64))
    assert features["log_arithmetic_intensity"] == 0


SHARED = """
@T.prim_func
def main(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32")):
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        S = T.decl_buffer((1024,), "float32", scope="shared")
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            S[tx * {stride}] = A[tx]
            T.evaluate(T.tvm_storage_sync("shared"))
            B[tx] = S[tx * {stride}] * T.float32(2.0)
"""


@pytest.mark.parametrize("stride, ways", [(1, 1), (2, 2), (3, 1), (8, 8), (32, 32)])
def test_shared_bank_conflicts(stride, ways):
    features = named(extract_features(tir.parse(SHARED.format(stride=stride)), CUDA))
    assert features["shared_bank_conflict_ways"] == ways
    assert features["log_shared_bytes_per_group"] == pytest.approx(log2p(4096))
    assert features["log_barriers_per_group"] == 1
    assert features["log_shared_reuse"] == 1  # each stored word is loaded once
    assert features["log_flops"] == pytest.approx(log2p(32))


TWO_KERNELS = """
@T.prim_func
def main(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32"), C: T.Buffer((256,), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            if bx * 128 + tx < 250:
                B[bx * 128 + tx] = A[bx * 128 + tx] + T.float32(1.0)
    for bx in T.thread_binding(8, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            C[bx * 32 + tx] = B[bx * 32 + tx]
"""


def test_kernels_are_counted_and_the_largest_launch_reported():
    features = named(extract_features(tir.parse(TWO_KERNELS), CUDA))
    assert features["num_kernels"] == 2
    assert features["log_threads_per_group"] == pytest.approx(log2p(128))
    assert features["log_grid_size"] == pytest.approx(log2p(8))
    assert features["predicated_fraction"] == pytest.approx(0.5)
    assert features["warp_utilization"] == 1


def test_threads_that_do_not_fill_warps():
    text = COPY.format(index="bx * 64 + tx").replace(
        'T.thread_binding(64, thread="threadIdx.x")', 'T.thread_binding(48, thread="threadIdx.x")'
    )
    features = named(extract_features(tir.parse(text), CUDA))
    assert features["warp_utilization"] == pytest.approx(48 / 64)
    assert features["threads_limit_fraction"] == pytest.approx(48 / 1024)


# ---------------------------------------------------------------- CPU


def cpu_schedule() -> tir.PrimFunc:
    sch = Schedule(MatmulSmall)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    j_0, j_1 = sch.split(j, [None, 8])
    k_0, k_1 = sch.split(k, [None, 4])
    sch.reorder(i, j_0, k_0, k_1, j_1)
    sch.parallel(i)
    sch.unroll(k_1)
    sch.vectorize(j_1)
    sch.annotate(block, "pragma_auto_unroll_max_step", 64)
    return sch.mod["main"]


def test_cpu_loop_kinds():
    features = named(extract_features(cpu_schedule(), CPU))
    assert features["is_gpu"] == 0
    assert features["log_parallel_extent"] == pytest.approx(log2p(64))
    assert features["vector_lanes"] == 8
    assert features["log_unrolled_extent"] == pytest.approx(log2p(4))
    assert features["log_auto_unroll_max_step"] == pytest.approx(log2p(64))
    assert features["log_innermost_extent"] == pytest.approx(log2p(8))
    # Each iteration of the parallel i loop runs 64 * 64 multiply-adds.
    assert features["log_work_per_thread"] == pytest.approx(log2p(64 * 64))
    assert features["log_threads_per_group"] == pytest.approx(log2p(1))
    assert features["num_kernels"] == 1


def test_cpu_naive_matmul_memory():
    features = named(extract_features(MatmulSmall, CPU))
    # C is stored at every k, and zeroed once per (i, j) under `if k == 0`.
    assert features["log_global_store_bytes"] == pytest.approx(log2p((64**3 + 64**2) * 4), abs=1e-4)
    # Inner loop k: A moves by one float, B by a row, C not at all (next loop j: one float).
    # Accesses weigh by bytes moved: A, B, C loads and C stores each 1, the init store 1/64.
    init = 1 / 64
    assert features["global_contiguous_fraction"] == pytest.approx((3 + init) / (4 + init))
    assert features["global_transaction_efficiency"] == pytest.approx(
        (1 + 1 / 16 + 1 + 1 + init) / (4 + init)
    )
    assert features["max_loop_depth"] == 3
    assert features["log_work_per_thread"] == pytest.approx(log2p(64**3))


# ---------------------------------------------------------------- speed


def test_extraction_takes_a_few_milliseconds():
    lowered = lower_for_features(seed_shared_matmul(), CUDA)
    extract_features(lowered, CUDA)
    best = min(_seconds(lambda: extract_features(lowered, CUDA)) for _ in range(10))
    # About 1 ms on an idle core; the bound leaves room for a loaded test machine.
    assert best < 0.02, f"feature extraction took {best * 1e3:.1f} ms"


def _seconds(call) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


# ---------------------------------------------------------------- the main store's loop nest


def nest(vector: np.ndarray, level: int) -> dict[str, float]:
    return {
        name.split("_", 1)[1]: value
        for name, value in named(vector).items()
        if name.startswith(f"level{level}_")
    }


def test_nest_levels_of_a_cpu_matmul_counted_by_hand():
    """for i, j_0, k: vectorized j_1 (16): C[i, 16 j_0 + j_1] += A[i, k] * B[k, 16 j_0 + j_1]."""
    sch = Schedule(MyModuleMatmul)
    i, j, k = sch.get_loops(sch.get_block("C"))
    j_0, j_1 = sch.split(j, [None, 16])
    sch.reorder(i, j_0, k, j_1)
    sch.vectorize(j_1)
    vector = extract_features(sch.mod["main"], CPU)
    kb, row, matrix = 4, 1024 * 4, 1024 * 1024 * 4
    # level: (extent, kind, accumulates, bytes touched by C, A and B inside it)
    expected = [
        (16, "vectorized", 0, 16 * kb + kb + 16 * kb),
        (1024, "serial", 1, 16 * kb + row + 1024 * 16 * kb),
        (64, "serial", 0, row + row + matrix),
        (1024, "serial", 0, 3 * matrix),
    ]
    iterations = 1
    for level, (extent, kind, accumulates, working_set) in enumerate(expected):
        iterations *= extent
        found = nest(vector, level)
        assert found["log_extent"] == pytest.approx(log2p(extent))
        assert found["kind"] == NEST_KIND_CODES[kind]
        assert found["is_reduction"] == accumulates
        assert found["log_working_set"] == pytest.approx(log2p(working_set), abs=1e-4)
        assert found["log_intensity"] == pytest.approx(log2p(2 * iterations / working_set), abs=1e-4)
    # Four loops: the outer two levels do not exist.
    assert all(value == 0 for value in {**nest(vector, 4), **nest(vector, 5)}.values())


def test_nest_levels_of_the_seed_gpu_matmul(seed):
    """Innermost first the register tile, whose working set fits in registers, then wider levels."""
    vector = extract_features(seed_shared_matmul(), CUDA)
    sets = [nest(vector, level)["log_working_set"] for level in range(6)]
    assert sets == sorted(sets)  # each level touches at least what the levels inside it touch
    kinds = [nest(vector, level)["kind"] for level in range(6)]
    assert NEST_KIND_CODES["thread"] in kinds and NEST_KIND_CODES["serial"] in kinds
