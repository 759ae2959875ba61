"""The GPU tiling rule draws register fragments: per k step, vectors of each shared tile in registers.

About half the GPU samples of a matmul read A's column and B's row through local
fragments (A's shared tile transposed so its column is a row), drafted with the
innermost reduction level 1; those candidates compute numpy's product on C and in
the Metal simulator, print float2/float4 shared-memory reads on CUDA (slices of 8
or more spread as float4 groups one thread apart), and their traces replay with
mutated decisions. Every built-in GPU workload still samples.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from codegen import build
from codegen.build import generate_source
from codegen.target import Target
from tuner import workloads
from tuner.space import SpaceGenerator

MATMUL = workloads.matmul(128, 128, 128)


def _fragment_samples(target: str, count: int) -> list:
    space = SpaceGenerator(Target.parse(target))
    samples = [space.sample(MATMUL, seed) for seed in range(count)]
    return [sch for sch in samples if "storage_scope='local', consumer_blocks=None)" in _reads(sch)]


def _reads(sch) -> str:
    return "\n".join(line for line in sch.trace.as_python().splitlines() if "cache_read" in line)


def test_about_half_the_samples_use_fragments_with_vector_reads():
    fragments = _fragment_samples("cuda", 12)
    assert 3 <= len(fragments) <= 9, len(fragments)
    vector_reads = 0
    for sch in fragments:
        assert "transform_layout" in sch.trace.as_python() or "_shared_local[" not in _reads(sch)
        source, _ = generate_source(sch.mod, "cuda")
        vector_reads += "(float4*)(A_shared_local" in source or "(float2*)(A_shared_local" in source
    assert vector_reads >= 1


def test_slices_of_eight_or_more_are_spread_in_float4_groups():
    """A thread's 8+ rows (columns) of a shared tile are stored as float4 groups one thread apart."""
    space = SpaceGenerator(Target.parse("cuda"))
    layouts = [
        line
        for seed in range(12)
        for line in space.sample(workloads.matmul(1024, 1024, 1024), seed).trace.as_python().splitlines()
        if "transform_layout" in line
    ]
    assert any("// 4" in line and "% 4)" in line for line in layouts), layouts


@pytest.mark.parametrize("target, device", [("c", None), ("metal", "sim")], ids=["c", "metal-sim"])
def test_fragment_candidates_compute(target, device):
    rng = np.random.default_rng(7)
    a, b = (rng.random((128, 128)) - 0.5).astype("float32"), (rng.random((128, 128)) - 0.5).astype("float32")
    for sch in _fragment_samples("metal", 8)[:3]:
        c = np.full((128, 128), 1e3, dtype="float32")
        build(sch.mod, target, device=device)["main"](a, b, c)
        np.testing.assert_allclose(
            c, a.astype("float64") @ b, rtol=1e-4, atol=1e-4, err_msg=sch.trace.as_python()
        )


def test_mutated_fragment_candidates_replay_and_compute():
    space = SpaceGenerator(Target.parse("cuda"))
    rng = np.random.default_rng(3)
    a, b = (rng.random((128, 128)) - 0.5).astype("float32"), (rng.random((128, 128)) - 0.5).astype("float32")
    mutants = 0
    for sch in _fragment_samples("cuda", 8)[:2]:
        for seed in range(3):
            child = space.mutate(sch.trace, MATMUL, random.Random(seed))
            if child is None:
                continue
            c = np.full((128, 128), 1e3, dtype="float32")
            build(child.mod, "c")["main"](a, b, c)
            np.testing.assert_allclose(c, a.astype("float64") @ b, rtol=1e-4, atol=1e-4)
            mutants += 1
    assert mutants >= 2


@pytest.mark.parametrize("name", ["batch_matmul", "conv2d_nhwc", "matmul_bias_relu", "depthwise_conv2d"])
def test_every_tiled_workload_still_samples(name):
    space = SpaceGenerator(Target.parse("cuda"))
    mod = workloads.WORKLOADS[name].make()
    for seed in range(6):
        generate_source(space.sample(mod, seed).mod, "cuda")
