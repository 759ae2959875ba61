"""The space's cross-thread reduction rule: long reductions get a thread group per output on GPUs.

Candidates of softmax, layer norm and a row sum with long rows bind the reduction's inner loop
to threadIdx.x (a cross-thread reduction), compute the workload (reference
executor, and built for the Metal simulator), replay from their trace, mutate to
another thread count, and have finite features. Short reductions keep one thread
per output.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

import tir
from codegen import build
from schedule import Schedule, Trace
from tests.schedule.util import random_args
from tir.functor import collect_vars
from tuner import workloads
from tuner.features import extract_features
from tuner.space import SpaceGenerator


def _reduction_loops_on_threads(func: tir.PrimFunc) -> list[str]:
    """Blocks with a reduction iterator bound to a threadIdx loop."""
    found = []

    class _Walk(tir.Visitor):
        def __init__(self):
            self.thread_vars: set[tir.Var] = set()

        def visit_For(self, loop) -> None:
            if (loop.thread_tag or "").startswith("threadIdx"):
                self.thread_vars.add(loop.loop_var)
            self.generic_visit(loop)

        def visit_BlockRealize(self, realize) -> None:
            for iv, value in zip(realize.block.iter_vars, realize.iter_values):
                if iv.kind is tir.IterKind.REDUCE and collect_vars(value) & self.thread_vars:
                    found.append(realize.block.name)
            self.generic_visit(realize)

    _Walk().visit(func.body)
    return found


@pytest.mark.parametrize("target", ["cuda", "metal"])
@pytest.mark.parametrize(
    ("mod", "reductions"),
    [
        (workloads.softmax(4, 100), ["A_max", "A_sum"]),
        (workloads.reduction_sum(8, 200), ["B"]),
        (workloads.layer_norm(4, 96), ["X_sq_sum", "X_sum"]),
    ],
    ids=["softmax", "reduction_sum", "layer_norm"],
)
def test_long_reductions_are_cross_thread(mod, reductions, target):
    space = SpaceGenerator(target)
    func = mod.main_function()
    for seed in range(2):
        sch = space.sample(mod, seed)
        assert sorted(_reduction_loops_on_threads(sch.mod.main_function())) == reductions
        replayed = Schedule(mod)
        Trace.apply_json_to_schedule(json.loads(json.dumps(sch.trace.as_json())), replayed)
        tir.assert_structural_equal(replayed.mod, sch.mod)
        expected, got = random_args(func, seed), random_args(func, seed)
        tir.interpret(func, *expected)
        got[-1][...] = np.nan
        build(sch.mod, "metal", device="sim")["main"](*got)
        np.testing.assert_allclose(got[-1], expected[-1], rtol=1e-5, atol=1e-6)
        assert np.isfinite(extract_features(sch.mod, target)).all()
    assert space.mutate(sch.trace, mod, random.Random(0)) is not None


def test_short_reductions_keep_one_thread_per_output():
    sch = SpaceGenerator("cuda").sample(workloads.reduction_sum(8, 16), 0)
    assert _reduction_loops_on_threads(sch.mod.main_function()) == []
