"""Epilogue fusion and fused rows: the space's candidates that put several blocks in one kernel.

Multi-level tiling folds an elementwise epilogue into the write-back where
``reverse_compute_inline`` allows (matmul_bias_relu) and otherwise moves it into the
tile with ``reverse_compute_at`` (a matmul whose product is also an output); the
fused-rows rule puts softmax's and layer norm's reductions under the row's
blockIdx loop as cross-thread reductions. Each candidate is one kernel, replays
from its trace, and computes what the reference executor computes on C and in the
Metal simulator; the CUDA sources compile with nvcc. The hand schedule with
``reverse_compute_at`` of the epilogue is checked the same way.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

import tir
from codegen import build
from codegen.build import generate_source
from codegen.cuda import nvcc
from schedule import Schedule, Trace
from tests.codegen.copy_schedules import matmul_and_relu, matmul_epilogue
from tests.schedule.util import random_args
from tuner import workloads
from tuner.cli import main
from tuner.space import SpaceGenerator
from tuner.space.limits import kernels

RUNNERS = {"c": ("c", None), "metal-sim": ("metal", "sim")}
TWO_OUTPUTS = tir.IRModule({"main": matmul_and_relu})


def _check_on(sch: Schedule, original: tir.IRModule, runner: str, seed: int = 0) -> None:
    """Every output of the scheduled module on ``runner`` equals the executor's on the original."""
    func = original.main_function()
    expected, got = random_args(func, seed), random_args(func, seed)
    tir.interpret(func, *expected)
    outputs = {w.buffer.name for b in _blocks(func) for w in b.writes} & {p.name for p in func.params}
    for param, array in zip(func.params, got):
        if param.name in outputs:
            array[...] = np.nan
    target, device = RUNNERS[runner]
    build(sch.mod, target, device=device)["main"](*got)
    for param, want, have in zip(func.params, expected, got):
        np.testing.assert_allclose(have, want, rtol=1e-4, atol=1e-4, err_msg=f"buffer {param.name}")


def _blocks(func: tir.PrimFunc) -> list[tir.Block]:
    found: list[tir.Block] = []
    tir.post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, tir.Block) else None)
    return found


def _replays(sch: Schedule, mod: tir.IRModule) -> None:
    replayed = Schedule(mod)
    Trace.apply_json_to_schedule(json.loads(json.dumps(sch.trace.as_json())), replayed)
    tir.assert_structural_equal(replayed.mod, sch.mod)


def _enclosing_thread_tags(func: tir.PrimFunc, name: str) -> list[str]:
    """The thread tags of the loops around block ``name``."""
    tags: list[str] = []

    class _Walk(tir.Visitor):
        def __init__(self):
            self.loops: list[str] = []

        def visit_For(self, loop) -> None:
            self.loops.append(loop.thread_tag or "")
            self.generic_visit(loop)
            self.loops.pop()

        def visit_BlockRealize(self, realize) -> None:
            if realize.block.name == name:
                tags.extend(t for t in self.loops if t)
            self.generic_visit(realize)

    _Walk().visit(func.body)
    return tags


# ---------------------------------------------------------------- reverse_compute_at of an epilogue


@pytest.mark.parametrize("runner", sorted(RUNNERS))
@pytest.mark.parametrize("case", ["bias_relu", "two_outputs"])
def test_hand_epilogue_under_the_thread_loop_computes(runner, case):
    mod, epilogue = (
        (workloads.matmul_bias_relu(64, 48, 40), "T_relu") if case == "bias_relu" else (TWO_OUTPUTS, "D")
    )
    sch = matmul_epilogue(mod, epilogue)
    assert _enclosing_thread_tags(sch.mod.main_function(), epilogue) == ["blockIdx.x", "threadIdx.x"]
    _check_on(sch, mod, runner)


@pytest.mark.skipif(not nvcc.nvcc_available(), reason="needs nvcc (the CUDA toolkit)")
def test_hand_epilogue_compiles_with_nvcc():
    sch = matmul_epilogue(workloads.matmul_bias_relu(256, 256, 128), "T_relu")
    source, _ = generate_source(sch.mod, "cuda")
    assert source.count("__global__") == 1
    assert nvcc.compile_with_nvcc(source, "sm_90")[:4] == b"\x7fELF"


# ---------------------------------------------------------------- the space: epilogues


@pytest.mark.parametrize("target", ["cuda", "c"])
def test_bias_relu_folds_into_the_write_back(target):
    mod = workloads.matmul_bias_relu(64, 64, 32)
    for seed in range(3):
        sch = SpaceGenerator(target).sample(mod, seed)
        names = sch.block_names(scope=None)
        assert "T_relu" not in names and "T_add" not in names  # both inlined into C_local's store
        packed = sch.trace.as_python().count("storage_scope='global'")  # C: inputs copied in tile order
        assert len(kernels(sch.mod.main_function())) == 1 + packed
        _replays(sch, mod)
        _check_on(sch, mod, "metal-sim" if target == "cuda" else "c", seed)


@pytest.mark.parametrize("target", ["cuda", "c"])
def test_epilogue_of_an_output_is_fused_with_reverse_compute_at(target):
    for seed in range(3):
        sch = SpaceGenerator(target).sample(TWO_OUTPUTS, seed)
        func = sch.mod.main_function()
        assert len(kernels(func)) == 1 + sch.trace.as_python().count("storage_scope='global'")
        assert any(i.kind == "reverse_compute_at" for i in sch.trace.insts)
        if target == "cuda":
            assert _enclosing_thread_tags(func, "D") == ["blockIdx.x", "threadIdx.x"]
        _replays(sch, TWO_OUTPUTS)
        _check_on(sch, TWO_OUTPUTS, "metal-sim" if target == "cuda" else "c", seed)
    assert SpaceGenerator(target).mutate(sch.trace, TWO_OUTPUTS, random.Random(0)) is not None


NEIGHBOUR_EPILOGUE = tir.IRModule(
    {
        "main": tir.parse(
            """
@T.prim_func
def main(A: T.Buffer((32, 16), "float32"), B: T.Buffer((16, 33), "float32"),
         C: T.Buffer((32, 33), "float32"), D: T.Buffer((32, 32), "float32")):
    for i, j, k in T.grid(32, 33, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(32, 32):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = C[vi, vj] + C[vi, vj + 1]
"""
        )
    }
)


@pytest.mark.parametrize("seed", range(4))
def test_a_consumer_reading_a_neighbour_stays_outside_the_tile(seed):
    # D reads C[i, j + 1], which another iteration of the tile computes: moving it into the tile
    # would read elements not yet computed.
    sch = SpaceGenerator("c").sample(NEIGHBOUR_EPILOGUE, seed)
    _check_on(sch, NEIGHBOUR_EPILOGUE, "c", seed)


@pytest.mark.skipif(not nvcc.nvcc_available(), reason="needs nvcc (the CUDA toolkit)")
@pytest.mark.parametrize("mod", [workloads.matmul_bias_relu(256, 256, 256), TWO_OUTPUTS], ids=["bias", "two"])
def test_epilogue_candidates_compile_with_nvcc(mod):
    source, _ = generate_source(SpaceGenerator("cuda").sample(mod, 0).mod, "cuda")
    assert source.count("__global__") == 1
    assert nvcc.compile_with_nvcc(source, "sm_90")[:4] == b"\x7fELF"


def test_matmul_bias_relu_tunes_from_the_command_line(tmp_path, capsys):
    db = str(tmp_path / "t.db")
    assert main(["tune", "matmul_bias_relu", "--shape", "32,32,16", "--trials", "3", "--db", db]) == 0
    assert "matmul_bias_relu" in capsys.readouterr().out


# ---------------------------------------------------------------- the space: fused rows


FUSED = {
    "softmax": (workloads.softmax(5, 200), ["A_max", "A_sum"], "B"),
    "layer_norm": (workloads.layer_norm(5, 96), ["X_sum", "X_sq_sum"], "Y"),
}


@pytest.mark.parametrize("target", ["cuda", "metal"])
@pytest.mark.parametrize("name", sorted(FUSED))
def test_row_reductions_share_the_output_kernel(name, target):
    mod, reductions, output = FUSED[name]
    space = SpaceGenerator(target)
    for seed in range(3):
        sch = space.sample(mod, seed)
        func = sch.mod.main_function()
        assert len(kernels(func)) == 1
        for block in (*reductions, output):
            assert _enclosing_thread_tags(func, block) == ["blockIdx.x", "threadIdx.x"], block
        shared = {b.name for blk in _blocks(func) for b in blk.alloc_buffers if b.scope == "shared"}
        assert len(shared) == len(reductions)
        _replays(sch, mod)
        for runner in sorted(RUNNERS):
            _check_on(sch, mod, runner, seed)
    assert space.mutate(sch.trace, mod, random.Random(0)) is not None


def test_short_rows_are_not_fused():
    sch = SpaceGenerator("cuda").sample(workloads.softmax(8, 16), 0)
    assert len(kernels(sch.mod.main_function())) == 3


@pytest.mark.skipif(not nvcc.nvcc_available(), reason="needs nvcc (the CUDA toolkit)")
@pytest.mark.parametrize("name", sorted(FUSED))
def test_fused_rows_compile_with_nvcc(name):
    source, _ = generate_source(SpaceGenerator("cuda").sample(FUSED[name][0], 0).mod, "cuda")
    assert source.count("__global__") == 1 and "__shfl_down_sync" in source
    assert nvcc.compile_with_nvcc(source, "sm_90")[:4] == b"\x7fELF"
