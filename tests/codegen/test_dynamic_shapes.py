"""Dynamic shapes on the C target (issue 16): a shape variable is a scalar the module reads from
the arrays at call time.

``build`` makes each variable of a parameter's shape (``n`` in ``(n, 8)``) a trailing scalar
parameter of the C function; ``Module`` passes the size of the first array that has it and
refuses arrays that disagree. Scheduled and unscheduled programs must equal numpy for sizes the
schedule's factors do and do not divide. The GPU targets are tested in test_dynamic_shapes_gpu.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from codegen import build
from schedule import Schedule
from tests.schedule.test_symbolic_extents import scale_then_shift


def run(module, name: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    a = np.random.default_rng(n).random((n, 8)).astype("float32")
    c = np.full((n, 8), np.nan, "float32")
    module[name](a, c)
    return a, c


@pytest.mark.parametrize("n", [1, 7, 16, 45])
def test_unscheduled_dynamic_shape_runs_for_any_size(n):
    module = build(scale_then_shift, "c")
    a, c = run(module, "scale_then_shift", n)
    np.testing.assert_allclose(c, a * 2 + 1, rtol=1e-6)


def test_split_parallel_and_compute_at_build_with_the_size_as_a_parameter():
    sch = Schedule(scale_then_shift)
    i, _ = sch.get_loops(sch.get_block("C"))
    outer, _ = sch.split(i, [None, 16])
    sch.compute_at(sch.get_block("B"), outer)
    sch.parallel(outer)
    module = build(sch.mod, "c")
    source = module.get_source()
    assert "void tir_main(float* __restrict__ A, float* __restrict__ C, int n)" in source
    assert "float B[128];" in source  # the cache is one tile, whatever n is
    for n in (3, 16, 50):
        a, c = run(module, "main", n)
        np.testing.assert_allclose(c, a * 2 + 1, rtol=1e-6)
    assert [p.name for p in module.functions["main"].arguments] == ["A", "C"]


def test_arrays_that_disagree_on_a_size_are_refused():
    module = build(scale_then_shift, "c")
    with pytest.raises(
        ValueError, match=r"argument 1 \(C\) must be a float32 array of shape \('n', 8\) = \(4, 8\)"
    ):
        module["scale_then_shift"](np.zeros((4, 8), "float32"), np.zeros((5, 8), "float32"))


def test_timing_passes_the_size_too():
    module = build(scale_then_shift, "c")
    a, c = np.ones((33, 8), "float32"), np.zeros((33, 8), "float32")
    result = module.time_evaluator("scale_then_shift", number=2, repeat=1)(a, c)
    assert result.mean > 0
    np.testing.assert_allclose(c, 3.0)


def test_benchmark_counts_the_flops_of_the_call():
    module = build(scale_then_shift, "c")
    assert module.functions["scale_then_shift"].flops == 0  # they depend on n
    for n in (16, 300):
        a, c = np.ones((n, 8), "float32"), np.zeros((n, 8), "float32")
        result = module.benchmark("scale_then_shift", a, c, number=2, repeat=1)
        assert result.flops == 2 * n * 8  # one multiply and one add per element
        assert result.gflops > 0
