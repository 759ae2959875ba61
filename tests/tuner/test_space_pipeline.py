"""The GPU tiling rule draws software pipelines: depths within shared memory, async where the target has it.

Sampled pipelined candidates are built for the Metal simulator and checked against
numpy; the limit check counts each multi-versioned shared tile as many times as the
pipeline keeps it; a mutated pipeline depth is checked against the memory limits.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import numpy as np
import pytest

from codegen import build
from codegen.target import Target
from schedule import Schedule
from tests.codegen.pipeline_schedules import pipelined_matmul
from tir import For, IterKind
from tir.functor import stmts_pre_order
from tuner import workloads
from tuner.space import SpaceError, SpaceGenerator, check_limits
from tuner.space.generator import _sizes_buffers

MATMUL = workloads.matmul(64, 64, 64)


def _pipeline(mod) -> dict:
    """The software pipeline annotations of ``mod``'s main function (empty when none)."""
    loops = [n for n in stmts_pre_order(mod["main"].body) if isinstance(n, For)]
    return next((dict(lp.annotations) for lp in loops if "software_pipeline_stage" in lp.annotations), {})


@pytest.mark.parametrize(
    "target_name, has_async", [("cuda", True), ("cuda -arch=sm_75", False), ("metal", False)]
)
def test_gpu_matmul_samples_pipeline_depths(target_name, has_async):
    space = SpaceGenerator(Target.parse(target_name))
    depths = Counter()
    for seed in range(16):
        annotations = _pipeline(space.sample(MATMUL, seed).mod)
        if not annotations:
            continue
        stages = annotations["software_pipeline_stage"]
        assert stages[:-1] == [0] * (len(stages) - 1) and 0 <= stages[-1] <= 3
        assert annotations["software_pipeline_order"] == list(range(len(stages)))
        assert ("software_pipeline_async_stages" in annotations) == has_async
        depths[stages[-1] + 1] += 1
    assert len(depths) >= 3, depths


def test_sampled_pipelines_compute_in_the_simulator():
    space = SpaceGenerator(Target.parse("metal"))
    rng = np.random.default_rng(5)
    a, b = (rng.random((64, 64)) + 0.5).astype("float32"), (rng.random((64, 64)) + 0.5).astype("float32")
    built = 0
    for seed in range(12):
        sch = space.sample(MATMUL, seed)
        annotations = _pipeline(sch.mod)
        if not annotations or annotations["software_pipeline_stage"][-1] == 0 or built == 3:
            continue
        c = np.full((64, 64), 1e3, dtype="float32")
        build(sch.mod, "metal", device="sim")["main"](a, b, c)
        np.testing.assert_allclose(c, a.astype("float64") @ b, rtol=1e-4, err_msg=sch.trace.as_python())
        built += 1
    assert built == 3


def test_check_limits_counts_every_version_of_a_pipelined_tile():
    # One stage of A and B tiles (64 x 16 floats each) is 8 KiB; four stages need 32 KiB.
    target = replace(Target.parse("cuda"), max_shared_memory_bytes=16 * 1024)
    check_limits(pipelined_matmul(128, stages=1), target)
    check_limits(pipelined_matmul(128, stages=2), target)
    with pytest.raises(SpaceError, match="needs 32768 bytes of shared memory") as info:
        check_limits(pipelined_matmul(128, stages=4), target)
    assert info.value.limit == "max_shared_memory_bytes"


def test_a_pipeline_depth_decides_buffer_sizes_and_a_fetch_width_does_not():
    trace = next(
        sch.trace for seed in range(16) if _pipeline((sch := SpaceGenerator("cuda").sample(MATMUL, seed)).mod)
    )
    categorical = [i for i, inst in enumerate(trace.insts) if inst.kind == "sample_categorical"]
    depth = next(i for i in categorical if trace.insts[i].args["candidates"][:2] == [0, 1])
    lanes = next(i for i in categorical if trace.insts[i].args["candidates"] == [1, 2, 4])
    assert _sizes_buffers(trace, depth) and not _sizes_buffers(trace, lanes)


# ---------------------------------------------------------------- preferred matmul tilings


def _matmul_tiles(sch) -> list:
    tiles = [inst for inst in sch.trace.insts if inst.kind == "sample_perfect_tile"]
    return [list(sch.trace.decisions[inst]) for inst in tiles[:3]]


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        (1024, [[16, 16, 1, 4], [16, 16, 1, 4], [64, 16, 1]]),  # 128-wide blocks would be only 64
        (4096, [[32, 16, 1, 8], [32, 16, 1, 8], [512, 8, 1]]),
    ],
)
def test_gpu_matmul_drafts_the_preferred_tiling_in_about_a_quarter_of_the_samples(n, expected):
    mod, space = workloads.matmul(n, n, n), SpaceGenerator("cuda")
    drawn = Counter(str(_matmul_tiles(space.sample(mod, seed=seed))) for seed in range(60))
    assert 6 <= drawn[str(expected)] <= 26, drawn.most_common(3)


def test_a_batch_matmul_or_a_small_matmul_has_no_preferred_tiling():
    from tuner.space.multi_level_tiling import _preferred_gpu_drafts

    def drafts(mod):
        sch = Schedule(mod)
        iters = sch.get(sch.get_block("C")).iter_vars
        counts = [4 if iv.kind is IterKind.SPATIAL else 3 for iv in iters]
        return _preferred_gpu_drafts(iters, [iv.dom.extent.value for iv in iters], counts)

    assert drafts(workloads.matmul(1024, 1024, 1024))[0] == [[16, 16, 1, 4], [16, 16, 1, 4], [64, 16, 1]]
    assert drafts(workloads.matmul(256, 256, 256)) == []  # 16 blocks of 64 x 64: too few
    assert drafts(workloads.batch_matmul(16, 128, 128, 64)) == []
