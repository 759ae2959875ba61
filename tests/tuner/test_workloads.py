"""Tests of the built-in workloads (tuner/workloads.py): scripts that round-trip through the
printer and parser, results of the executor against the numpy references on random inputs,
FLOP counts counted by hand, stable structural hashes, and the messages for bad names,
shapes and dtypes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

import tir
from codegen import build
from tests.fixtures.fixture import garbage, rand
from tir.bfloat16 import from_bfloat16_bits, to_bfloat16_bits
from tuner import workloads
from tuner.measure.arrays import mismatch, random_arguments
from tuner.space import SpaceGenerator
from tuner.workloads import WORKLOADS, Workload, WorkloadError, get_workload, make

# Small shapes the executor runs quickly; the convolutions cover a pad block, no pad
# block (padding 0, stride default) and stride 2 with odd sizes.
SMALL = [
    ("matmul", "5,6,7"),
    ("matmul_bias_relu", "5,6,7"),
    ("batch_matmul", "2,3,5,4"),
    ("conv2d_nhwc", "1,6,6,3,4,3,3,1,1"),
    ("conv2d_nhwc", "2,7,5,3,2,3,2"),
    ("conv2d_nhwc", "1,7,7,2,3,3,3,2,1"),
    ("depthwise_conv2d", "1,6,6,4,3,3,1,1"),
    ("depthwise_conv2d", "1,7,7,3,3,3,2,0"),
    ("conv_layer", "2,3,4,5,6"),
    ("softmax", "3,9"),
    ("reduction_sum", "4,11"),
    ("layer_norm", "3,9"),
    ("elementwise_chain", "17"),
    ("window_sum", "13"),
]
DTYPES = ["float32", "float16"]
TOLERANCE = {"float32": dict(rtol=1e-5, atol=1e-5), "float16": dict(rtol=2e-2, atol=2e-2)}


def shape_of(buffer) -> tuple[int, ...]:
    return tuple(int(dim.value) for dim in buffer.shape)


def test_registry_lists_every_workload_with_its_sizes():
    assert set(WORKLOADS) == {
        "matmul",
        "matmul_bias_relu",
        "batch_matmul",
        "conv2d_nhwc",
        "depthwise_conv2d",
        "conv_layer",
        "softmax",
        "reduction_sum",
        "layer_norm",
        "elementwise_chain",
        "window_sum",
    }
    assert {name for name, _ in SMALL} == set(WORKLOADS)
    assert WORKLOADS["matmul"].params == ("M", "N", "K")
    assert WORKLOADS["conv2d_nhwc"].params[-2:] == ("stride", "padding")
    assert WORKLOADS["conv2d_nhwc"].required == 7
    for workload in WORKLOADS.values():
        assert isinstance(workload, Workload)
        assert workload.doc
        assert workload.required <= len(workload.default_shape) <= len(workload.params)
        assert getattr(workloads, workload.name) is workload.function
    assert get_workload("softmax") is WORKLOADS["softmax"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("name", "shape"), SMALL)
def test_workload_prints_and_parses_back(name, shape, dtype):
    mod = make(name, shape, dtype)
    assert isinstance(mod, tir.IRModule)
    assert list(mod.functions) == ["main"]
    assert all(buffer.dtype == dtype for buffer in mod["main"].buffer_params)
    text = mod.script()
    again = tir.parse(text)
    assert tir.structural_equal(mod, again)
    assert again.script() == text


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("name", "shape"), SMALL)
def test_executor_matches_numpy_reference(name, shape, dtype):
    workload = get_workload(name)
    mod = workload.make(shape, dtype)
    rng = np.random.default_rng(zlib.crc32(f"{name} {shape} {dtype}".encode()))
    *inputs, output = (shape_of(b) for b in mod["main"].buffer_params)
    arrays = [rand(rng, *s, dtype=dtype) for s in inputs]
    result = garbage(rng, *output, dtype=dtype)
    tir.interpret(mod, *arrays, result)
    (expected,) = workload.reference(*arrays, **workload.sizes(shape))
    assert expected.dtype == np.dtype(dtype)
    assert expected.shape == result.shape
    np.testing.assert_allclose(result.astype(np.float64), expected.astype(np.float64), **TOLERANCE[dtype])


def test_shapes_of_buffers_follow_the_sizes():
    conv = make("conv2d_nhwc", "2,9,8,3,5,3,2,2,1")
    x, w, y = (shape_of(b) for b in conv["main"].buffer_params)
    # (9 + 2 - 3) // 2 + 1 = 5 and (8 + 2 - 2) // 2 + 1 = 5
    assert (x, w, y) == ((2, 9, 8, 3), (3, 2, 3, 5), (2, 5, 5, 5))
    assert 'T.block("X_pad")' in conv.script()
    unpadded = make("conv2d_nhwc", "1,6,6,3,4,3,3")
    assert shape_of(unpadded["main"].buffer_params[2]) == (1, 4, 4, 4)
    assert "X_pad" not in unpadded.script()
    window = make("window_sum", [10])
    assert [shape_of(b) for b in window["main"].buffer_params] == [(12,), (10,)]
    default = make("matmul")
    assert [shape_of(b) for b in default["main"].buffer_params] == [(1024, 1024)] * 3


def test_seed_matmul_is_the_notebook_program():
    seed = tir.parse(
        """
        @I.ir_module
        class MyModuleMatmul:
            @T.prim_func
            def main(A: T.Buffer[(64, 64), "float32"], B: T.Buffer[(64, 64), "float32"],
                     C: T.Buffer[(64, 64), "float32"]):
                T.func_attr({"global_symbol": "main", "tir.noalias": True})
                for i, j, k in T.grid(64, 64, 64):
                    with T.block("C"):
                        vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                        with T.init():
                            C[vi, vj] = T.float32(0)
                        C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
        """
    )
    assert tir.structural_equal(make("matmul", "64,64,64"), seed)


FLOPS_BY_HAND = [
    ("matmul", (64, 32, 16), 2 * 64 * 32 * 16),
    # multiply-add per tap, then the bias add and the max of the ReLU
    ("matmul_bias_relu", (64, 32, 16), 2 * 64 * 32 * 16 + 2 * 64 * 32),
    ("batch_matmul", (3, 8, 4, 5), 2 * 3 * 8 * 4 * 5),
    # output 4x4, the pad block does no floating-point work
    ("conv2d_nhwc", (1, 8, 8, 3, 5, 3, 3, 2, 1), 2 * 1 * 4 * 4 * 5 * 3 * 3 * 3),
    ("depthwise_conv2d", (2, 6, 6, 4, 3, 3), 2 * 2 * 4 * 4 * 4 * 3 * 3),
    # multiply-add per tap, then the max of the ReLU
    ("conv_layer", (2, 3, 4, 5, 6), 2 * 3 * 4 * 6 * (2 * 5 * 3 * 3 + 1)),
    # max; sub, exp, add; sub, exp, div
    ("softmax", (6, 10), 6 * 10 * (1 + 3 + 3)),
    ("reduction_sum", (6, 10), 6 * 10),
    # sum: add; squares: mul, add; normalize: 2 for x - mean, 7 for rsqrt(E[x^2] - mean^2 + eps), 3 affine
    ("layer_norm", (6, 10), 6 * 10 * (1 + 2 + 12)),
    ("elementwise_chain", (100,), 3 * 100),
    ("window_sum", (100,), 2 * 100),
]


@pytest.mark.parametrize(("name", "shape", "flops"), FLOPS_BY_HAND)
def test_flop_count_is_counted_by_hand(name, shape, flops):
    assert tir.flop_count(make(name, shape)) == flops


def test_structural_hash_differs_across_shapes_dtypes_and_workloads():
    hashes = {tir.structural_hash(make(name, shape)) for name, shape in SMALL}
    assert len(hashes) == len(SMALL)
    matmul_hashes = {
        tir.structural_hash(make("matmul", shape, dtype))
        for shape in ("8,8,8", "8,8,16", "16,8,8")
        for dtype in DTYPES
    }
    assert len(matmul_hashes) == 6
    assert tir.structural_hash(make("matmul", "8,8,8")) == tir.structural_hash(make("matmul", [8, 8, 8]))


def test_structural_hash_is_stable_across_processes():
    here = {f"{name} {shape}": tir.structural_hash(make(name, shape)) for name, shape in SMALL}
    program = (
        "import json, tir\n"
        "from tuner.workloads import make\n"
        f"cases = {[list(case) for case in SMALL]!r}\n"
        "print(json.dumps({f'{n} {s}': tir.structural_hash(make(n, s)) for n, s in cases}))\n"
    )
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONHASHSEED="12345", PYTHONPATH=str(root))
    out = subprocess.run(
        [sys.executable, "-c", program], cwd=root, env=env, capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout) == here


def test_unknown_name_suggests_a_close_one_and_lists_all():
    with pytest.raises(WorkloadError, match="unknown workload 'matmull'; did you mean 'matmul'") as info:
        get_workload("matmull")
    assert "known workloads: batch_matmul, conv2d_nhwc, conv_layer, depthwise_conv2d" in str(info.value)
    with pytest.raises(WorkloadError) as info:
        make("qqq", "1")
    assert "did you mean" not in str(info.value)
    assert "window_sum" in str(info.value)


@pytest.mark.parametrize(
    ("name", "shape", "message"),
    [
        ("matmul", "512,512", "matmul takes 3 sizes M,N,K; got 2: '512,512'"),
        ("matmul", [1, 2, 3, 4], "matmul takes 3 sizes M,N,K; got 4: '1,2,3,4'"),
        ("conv2d_nhwc", "1,2", "conv2d_nhwc takes 7 to 9 sizes N,H,W,CI,CO,KH,KW[,stride][,padding]; got 2"),
        ("matmul", "512,abc,3", "matmul: size 'abc' in '512,abc,3' is not a whole number"),
        ("matmul", "512,-1,3", "size '-1' in '512,-1,3' is not a whole number"),
        ("matmul", "512,0,3", "matmul: N must be at least 1, got 0"),
        ("matmul", [4, 4.5, 4], "matmul: N must be a whole number, got 4.5"),
        ("window_sum", "", "window_sum takes 1 size N; got 0: ''"),
        ("conv2d_nhwc", "1,4,4,3,3,5,3", "a 5-wide kernel does not fit the H axis of size 4 with padding 0"),
        ("depthwise_conv2d", "1,4,4,3,3,3,0", "depthwise_conv2d: stride must be at least 1, got 0"),
    ],
)
def test_bad_shapes_say_what_is_wrong(name, shape, message):
    with pytest.raises(WorkloadError) as info:
        make(name, shape)
    assert message in str(info.value)


@pytest.mark.parametrize("dtype", ["int8", "float64", "bf16"])
def test_bad_dtype_lists_the_allowed_ones(dtype):
    allowed = "float32, float16, bfloat16"
    with pytest.raises(WorkloadError, match=f"workload dtype must be one of {allowed}; got '{dtype}'"):
        make("softmax", "4,4", dtype)
    with pytest.raises(WorkloadError, match=f"must be one of {allowed}"):
        workloads.matmul(4, 4, 4, dtype=dtype)


BFLOAT16_SMALL = [(name, shape) for name, shape in SMALL if name in workloads.BFLOAT16_WORKLOADS]


@pytest.mark.parametrize(("name", "shape"), BFLOAT16_SMALL)
def test_bfloat16_workloads_match_the_reference_on_bit_arrays(name, shape):
    """Inputs are bfloat16 bits; reductions write float32, the rest bfloat16 bits (compared as values)."""
    workload = get_workload(name)
    mod = workload.make(shape, "bfloat16")
    *inputs, output = mod["main"].buffer_params
    assert all(b.dtype == "bfloat16" for b in inputs)
    assert output.dtype == ("float32" if name in workloads.BFLOAT16_FLOAT32_OUTPUT else "bfloat16")
    rng = np.random.default_rng(zlib.crc32(f"{name} {shape} bf16".encode()))
    arrays = [to_bfloat16_bits(rng.uniform(-1, 1, shape_of(b))) for b in inputs]
    result = np.zeros(shape_of(output), "float32" if output.dtype == "float32" else np.uint16)
    tir.interpret(mod, *arrays, result)
    (expected,) = workloads.reference_for(name, shape, "bfloat16")(arrays)
    assert expected.dtype == result.dtype
    if output.dtype == "bfloat16":
        result, expected = from_bfloat16_bits(result), from_bfloat16_bits(expected)
    np.testing.assert_allclose(result, expected, rtol=3e-2, atol=3e-2)
    assert tir.structural_equal(tir.parse(mod.script()), mod)


@pytest.mark.parametrize("name", ["softmax", "reduction_sum", "layer_norm", "conv_layer"])
def test_bfloat16_is_refused_where_8_bits_lose_too_much(name):
    with pytest.raises(WorkloadError, match=f"{name} is not offered in bfloat16.*bfloat16 workloads: matmul"):
        make(name, dict(SMALL)[name], "bfloat16")


@pytest.mark.parametrize(("target", "device"), [("metal", "sim"), ("c", None)])
def test_bfloat16_candidates_of_the_space_compute_the_workload(target, device):
    mod = make("matmul", "32,32,64", "bfloat16")
    arguments = random_arguments(mod["main"], 0)
    expected = [a.copy() for a in arguments]
    tir.interpret(mod, *expected)
    for seed in range(2):
        module = build(SpaceGenerator(target).sample(mod, seed).mod, target, device=device)
        got = [a.copy() for a in arguments]
        got[-1].fill(np.nan)
        module["main"](*got)
        assert mismatch("C", got[-1], expected[-1], terms=64, dtype="float32") is None
