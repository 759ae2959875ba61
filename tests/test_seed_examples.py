"""The seed examples (examples/seeds/) run end to end with small sizes and print what their seeds printed.

Each example checks its own results against numpy (an assertion fails the
test); these tests run their ``main`` in-process with small sizes and check the
printed lines that stand for the seed's output: the loop nest, the kernel
source, the GFLOPS.
"""

from __future__ import annotations

from examples.seeds import (
    seed000_halide_metal,
    seed002_notebook,
    seed003_conv_layer,
    seed004_needle_metal,
)


def test_seed000_brighter_tiles_and_skinny_matmul(capsys):
    seed000_halide_metal.main(["--size", "16", "--matmul", "128,64,2"])
    out = capsys.readouterr().out
    assert out.startswith(
        "blockIdx.y y_0 in [0, 1]:\n"
        "  blockIdx.x x_0 in [0, 1]:\n"
        "    threadIdx.y y_1 in [0, 7]:\n"
        "      threadIdx.x x_1 in [0, 7]:\n"
        "        brighter(...) = ...\n"
    )
    assert "brighter 16x16: equals input * 3 on metal (Metal host simulator" in out
    assert "kernel void main_kernel0(device const float* input [[buffer(0)]]," in out
    assert "matmul 128x64 by 64x2 on numpy arrays: matches numpy on metal" in out
    assert "GFLOPS" in out


def test_seed002_notebook_cells(capsys):
    seed002_notebook.main(["--n", "64", "--trials", "2"])
    out = capsys.readouterr().out
    for cell in ("vector add", "window sum", "GEMM-Blocking (local)", "GEMM-Blocking (shared)", "GEMM-tuned"):
        assert f"{cell} [c]: matches numpy" in out
        assert f"{cell} [metal simulator]: matches numpy" in out
    assert "threadgroup float A_shared[" in out


def test_seed003_halide_schedule_small(capsys):
    seed003_conv_layer.main(["--sizes", "1,2,10,16,64"])
    out = capsys.readouterr().out
    flops = 1 * 2 * 10 * 64 * (2 * 16 * 3 * 3 + 1)  # a multiply-add per tap, one max per output
    assert f"conv_layer 1,2,10,16,64: {flops:.3g} FLOPs, results match numpy" in out
    assert "vectorized c_1_1 in [0, 15]:" in out
    assert "Halide's schedule:" in out and "GFLOPS" in out


def test_seed004_every_needle_operator(capsys):
    seed004_needle_metal.main(["--size", "8"])
    out = capsys.readouterr().out
    assert out.count("matches numpy on metal simulator") == len(seed004_needle_metal.operators(8))
    assert "out[blockIdx_x * 128 + threadIdx_x] = tanh(A[blockIdx_x * 128 + threadIdx_x]);" in out
