"""The CPU tiling rule packs plainly indexed inputs in tile order in about half its samples.

A packed sample copies each input the tiled block reads at plain iterators (a conv
filter ``W[ci, ry, rx, co]``, matmul's ``A[i, k]`` and ``B[k, j]``; never the conv
input ``I[n, y + ry, ...]``) into a "global" buffer laid out in the loop order of
the tile levels, so a tile walks it contiguously. Those candidates compute numpy's
result, and their traces replay with mutated decisions (a mutated tiling keeps the
old layout, which is still a permutation of the copy).
"""

from __future__ import annotations

import random
from itertools import product

import numpy as np

from codegen import build
from examples.seeds.seed003_conv_layer import check, random_inputs
from tir import IterKind
from tuner import workloads
from tuner.space import SpaceGenerator
from tuner.space.multi_level_tiling import CPU_LEVELS, _tile_order

CONV_SIZES = {"N": 1, "H": 6, "W": 10, "CI": 16, "CO": 32}
CONV = workloads.conv_layer(**CONV_SIZES)
MATMUL = workloads.matmul(64, 64, 64)


def _layouts(sch) -> list[str]:
    return [line for line in sch.trace.as_python().splitlines() if "storage_scope='global'" in line]


def _samples(mod, count: int) -> list:
    space = SpaceGenerator("c")
    return [space.sample(mod, seed) for seed in range(count)]


def test_about_half_the_conv_samples_pack_the_filter_and_compute():
    samples = _samples(CONV, 10)
    packed = [sch for sch in samples if _layouts(sch)]
    assert 2 <= len(packed) <= 8, len(packed)
    for sch in packed:
        assert len(_layouts(sch)) == 1  # the filter; the input's indices are sums
        assert "filter_global" in sch.mod["main"].script()
    for sch in packed[:2] + [s for s in samples if not _layouts(s)][:1]:
        arrays = random_inputs(CONV, seed=5)
        build(sch.mod, "c")["main"](*arrays)
        check(CONV, arrays, CONV_SIZES)


def test_packed_matmul_candidates_and_their_mutants_compute():
    rng = np.random.default_rng(9)
    a, b = (rng.random((64, 64)) - 0.5).astype("float32"), (rng.random((64, 64)) - 0.5).astype("float32")
    space = SpaceGenerator("c")
    packed = [sch for sch in _samples(MATMUL, 8) if _layouts(sch)][:2]
    assert packed
    candidates = list(packed)
    for sch in packed:
        candidates += [space.mutate(sch, MATMUL, random.Random(seed)) for seed in range(2)]
    for sch in candidates:
        if sch is None:
            continue
        assert _layouts(sch)
        c = np.full((64, 64), np.nan, dtype="float32")
        build(sch.mod, "c")["main"](a, b, c)
        np.testing.assert_allclose(c, a.astype("float64") @ b, rtol=1e-4, atol=1e-4, err_msg=str(sch.trace))


def test_tile_order_walks_a_tile_contiguously():
    """B[k, j] tiled as j: [2, 2, 2, 4] (SSSS levels), k: [4, 4] (RR), walked in the loop order
    S0 S1 R0 S2 R1 S3: consecutive iterations touch consecutive packed elements."""
    factors = {"k": [4, 4], "j": [2, 2, 2, 4]}
    kinds = {"k": IterKind.REDUCE, "j": IterKind.SPATIAL}
    order = CPU_LEVELS
    dims = ["k", "j"]
    parts = [(d, level) for kind, level in order for d, name in enumerate(dims) if kinds[name] is kind]
    layout = _tile_order([factors[name] for name in dims], parts)
    extents = [
        f for kind, level in order for name in dims if kinds[name] is kind for f in [factors[name][level]]
    ]
    walked = []
    for steps in product(*(range(e) for e in extents)):
        values = {"k": 0, "j": 0}
        for (d, level), step in zip(parts, steps):
            name = dims[d]
            values[name] += step * int(np.prod(factors[name][level + 1 :]))
        walked.append(tuple(int(x) for x in layout(values["k"], values["j"])))
    flat = [int(np.ravel_multi_index(p, extents)) for p in walked]
    assert flat == list(range(16 * 32))
