"""Differential fuzzing: random small programs and schedules agree on the executor, C and the Metal simulator.

Hypothesis draws batches of cases. A case is a 2-D elementwise program over
``B`` (random extents) that reads ``A`` at offsets, through a gather ``I`` or
with an integer division by ``D``, carrying at most one hazard: a static offset
past the edge (the bounds prover or a run-time check catches it), a gather
index past the edge (data-dependent: only the checked build catches it), or a
zero divisor. Its schedule fuses, splits (non-divisible factors add a
``T.where``) and reorders. A child process (tests/codegen/fuzz_child.py) runs
every case on ``tir.interpret``, checked C, the checked Metal simulator and,
for the cases that stay in bounds, plain C; the parent asserts that the child
exited normally (no signal), and that every path gave the executor's numbers or
the executor's category of clean error. Each batch compiles one module per
path, so a few hundred cases cost a few compiler runs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

CHILD = Path(__file__).with_name("fuzz_child.py")
BATCH = 64


@st.composite
def cases(draw) -> dict:
    rows, cols = draw(st.integers(1, 9)), draw(st.integers(1, 9))
    hazard = draw(st.sampled_from(["none", "static", "gather", "divide"]))
    dr, dc = (draw(st.integers(-2, 2)), draw(st.integers(-2, 2))) if hazard == "static" else (0, 0)
    a_rows, a_cols = rows + draw(st.integers(0, 2)), cols + draw(st.integers(0, 2))
    poke = []
    if hazard == "gather":
        poke.append(("I", (draw(st.integers(0, 99)), a_rows + draw(st.integers(0, 3)))))
    if hazard == "divide":
        poke.append(("D", (draw(st.integers(0, 99)), 0)))
    source = f"""
@T.prim_func
def main(A: T.Buffer(({a_rows}, {a_cols}), "float32"), I: T.Buffer(({rows}, {cols}), "int32"),
         D: T.Buffer(({rows}, {cols}), "int32"), X: T.Buffer(({rows}, {cols}), "int32"),
         B: T.Buffer(({rows}, {cols}), "float32")):
    for i, j in T.grid({rows}, {cols}):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi + {dr}, vj + {dc}] * T.float32(2) + A[I[vi, vj], vj] + T.Cast(
                "float32", X[vi, vj] // D[vi, vj] + X[vi, vj] % D[vi, vj])
"""
    return {
        "source": source,
        "factor": draw(st.integers(1, 8)),
        "fuse": draw(st.booleans()),
        "reorder": draw(st.booleans()),
        "seed": draw(st.integers(0, 2**31)),
        "gather_high": min(rows, a_rows),
        "poke": poke,
    }


def run_child(batch: list[dict]) -> list[dict]:
    done = subprocess.run(
        [sys.executable, str(CHILD)], input=json.dumps(batch), capture_output=True, text=True, timeout=300
    )
    assert done.returncode >= 0, f"the fuzz child died of signal {-done.returncode}:\n{done.stderr[-3000:]}"
    assert done.returncode == 0, f"the fuzz child failed:\n{done.stderr[-3000:]}"
    return json.loads(done.stdout)


@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(cases(), min_size=BATCH, max_size=BATCH))
def test_executor_c_and_metal_sim_agree(batch):
    for case, result in zip(batch, run_child(batch)):
        expected = result.pop("executor")
        for path, got in result.items():
            context = f"{path} disagrees with the executor on\n{case}"
            if isinstance(expected, str):
                assert got == expected, f"{context}: expected {expected!r}, got {str(got)[:300]}"
            else:
                assert isinstance(got, list), f"{context}: expected numbers, got {got!r}"
                np.testing.assert_allclose(
                    np.array(got), np.array(expected), rtol=1e-5, atol=1e-5, err_msg=context
                )
