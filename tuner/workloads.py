"""Built-in workloads: the operators ``tir tune`` and the benchmarks know by name.

Each workload is a function of its sizes and dtype that formats TVMScript text
and parses it with ``tir.parse`` into an IRModule whose one function is "main"
(no user code runs; the text is ours and its numbers are checked integers).
Every "main" takes its inputs first and its output last. ``WORKLOADS`` maps
names to :class:`Workload` entries (sizes, defaults, a numpy reference);
``make("matmul", "512,512,512")`` is what the command line calls. The tuner
keys its records by the structural hash of "main" (tuner/database.py), so the
same sizes and dtype always find the same records.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

import tir
from tir import IRModule
from tir.bfloat16 import from_bfloat16_bits, to_bfloat16_bits

DTYPES = ("float32", "float16", "bfloat16")
# bfloat16 keeps 8 significant bits, so a long sum in it stops growing (1024 + 1 rounds back to
# 1024): these reductions read bfloat16 and accumulate and write float32, as tensor cores and
# cuBLAS do. The other workloads offered in bfloat16 keep it throughout.
BFLOAT16_FLOAT32_OUTPUT = ("matmul", "batch_matmul", "conv2d_nhwc", "depthwise_conv2d")
BFLOAT16_WORKLOADS = (*BFLOAT16_FLOAT32_OUTPUT, "elementwise_chain", "window_sum")

Reference = Callable[..., list[np.ndarray]]


class WorkloadError(ValueError):
    """A workload name, a shape or a dtype that the built-in workloads do not accept."""


# ---------------------------------------------------------------- argument checks


def _check_dtype(dtype: str, workload: str) -> None:
    if dtype not in DTYPES:
        raise WorkloadError(f"workload dtype must be one of {', '.join(DTYPES)}; got {dtype!r}")
    if dtype == "bfloat16" and workload not in BFLOAT16_WORKLOADS:
        raise WorkloadError(
            f"{workload} is not offered in bfloat16 (its sums and divisions lose too much in 8 bits); "
            f"bfloat16 workloads: {', '.join(BFLOAT16_WORKLOADS)}; use float16 or float32"
        )


def _output_dtype(dtype: str) -> str:
    """The output and accumulator dtype of a reduction workload over ``dtype`` inputs."""
    return "float32" if dtype == "bfloat16" else dtype


def _product(a: str, b: str, dtype: str) -> str:
    """``a * b`` as the reduction adds it: widened to float32 first for bfloat16 inputs."""
    if dtype == "bfloat16":
        return f'T.Cast("float32", {a}) * T.Cast("float32", {b})'
    return f"{a} * {b}"


def _check_sizes(workload: str, minimum: int = 1, **sizes: int) -> None:
    for name, value in sizes.items():
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise WorkloadError(f"{workload}: {name} must be a whole number, got {value!r}")
        if value < minimum:
            raise WorkloadError(f"{workload}: {name} must be at least {minimum}, got {value}")


def _conv_output_size(workload: str, size: int, kernel: int, stride: int, padding: int, axis: str) -> int:
    out = (size + 2 * padding - kernel) // stride + 1
    if out < 1:
        raise WorkloadError(
            f"{workload}: a {kernel}-wide kernel does not fit the {axis} axis of size {size} "
            f"with padding {padding}; use a smaller kernel or more padding"
        )
    return out


def _module(body: str) -> IRModule:
    module = tir.parse(body, filename="<tuner.workloads>")
    assert isinstance(module, IRModule)
    return module


_HEADER = """\
@I.ir_module
class Module:
    @T.prim_func
    def main({params}):
        T.func_attr({{"global_symbol": "main", "tir.noalias": True}})
"""


def _buffer(name: str, shape: Sequence[int], dtype: str) -> str:
    dims = ", ".join(str(int(d)) for d in shape)
    return f'{name}: T.Buffer(({dims},), "{dtype}")'


def _script(params: Sequence[str], body: str) -> str:
    return _HEADER.format(params=", ".join(params)) + body


# ---------------------------------------------------------------- workloads


def matmul(M: int, N: int, K: int, dtype: str = "float32") -> IRModule:
    """C[M, N] = A[M, K] @ B[K, N], one reduction block "C" with ``T.init`` (the seed notebook's)."""
    _check_sizes("matmul", M=M, N=N, K=K)
    _check_dtype(dtype, "matmul")
    out = _output_dtype(dtype)
    params = [_buffer("A", (M, K), dtype), _buffer("B", (K, N), dtype), _buffer("C", (M, N), out)]
    body = f"""\
        for i, j, k in T.grid({M}, {N}, {K}):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.{out}(0)
                C[vi, vj] = C[vi, vj] + {_product("A[vi, vk]", "B[vk, vj]", dtype)}
"""
    return _module(_script(params, body))


def matmul_bias_relu(M: int, N: int, K: int, dtype: str = "float32") -> IRModule:
    """D[M, N] = max(A[M, K] @ B[K, N] + bias[N], 0): a GEMM block "C" into an intermediate, then an
    epilogue block "T_add" (the bias) and "T_relu", as a framework's fused dense + bias + ReLU."""
    _check_sizes("matmul_bias_relu", M=M, N=N, K=K)
    _check_dtype(dtype, "matmul_bias_relu")
    params = [
        _buffer("A", (M, K), dtype),
        _buffer("B", (K, N), dtype),
        _buffer("bias", (N,), dtype),
        _buffer("D", (M, N), dtype),
    ]
    body = f"""\
        C = T.alloc_buffer(({M}, {N}), "{dtype}")
        T_add = T.alloc_buffer(({M}, {N}), "{dtype}")
        for i, j, k in T.grid({M}, {N}, {K}):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.{dtype}(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
        for i, j in T.grid({M}, {N}):
            with T.block("T_add"):
                vi, vj = T.axis.remap("SS", [i, j])
                T_add[vi, vj] = C[vi, vj] + bias[vj]
        for i, j in T.grid({M}, {N}):
            with T.block("T_relu"):
                vi, vj = T.axis.remap("SS", [i, j])
                D[vi, vj] = T.max(T_add[vi, vj], T.{dtype}(0))
"""
    return _module(_script(params, body))


def batch_matmul(B: int, M: int, N: int, K: int, dtype: str = "float32") -> IRModule:
    """C[b, M, N] = A[b, M, K] @ B[b, K, N] for each of B batches, one reduction block "C"."""
    _check_sizes("batch_matmul", B=B, M=M, N=N, K=K)
    _check_dtype(dtype, "batch_matmul")
    out = _output_dtype(dtype)
    params = [
        _buffer("A", (B, M, K), dtype),
        _buffer("B", (B, K, N), dtype),
        _buffer("C", (B, M, N), out),
    ]
    body = f"""\
        for b, i, j, k in T.grid({B}, {M}, {N}, {K}):
            with T.block("C"):
                vb, vi, vj, vk = T.axis.remap("SSSR", [b, i, j, k])
                with T.init():
                    C[vb, vi, vj] = T.{out}(0)
                C[vb, vi, vj] = C[vb, vi, vj] + {_product("A[vb, vi, vk]", "B[vb, vk, vj]", dtype)}
"""
    return _module(_script(params, body))


def _pad_block(N: int, H: int, W: int, C: int, padding: int, dtype: str) -> tuple[str, str]:
    """The zero-padding stage of a convolution: its allocation and block, and the name to read.

    No padding means no pad block (as TVM's topi): the convolution reads X directly.
    """
    if padding == 0:
        return "", "X"
    p = padding
    ph, pw = H + 2 * p, W + 2 * p
    text = f"""\
        X_pad = T.alloc_buffer(({N}, {ph}, {pw}, {C}), "{dtype}")
        for n, h, w, c in T.grid({N}, {ph}, {pw}, {C}):
            with T.block("X_pad"):
                vn, vh, vw, vc = T.axis.remap("SSSS", [n, h, w, c])
                X_pad[vn, vh, vw, vc] = T.if_then_else(
                    {p} <= vh and vh < {H + p} and {p} <= vw and vw < {W + p},
                    X[vn, vh - {p}, vw - {p}, vc],
                    T.{dtype}(0),
                )
"""
    return text, "X_pad"


def _window_index(output_var: str, reduce_var: str, stride: int) -> str:
    return f"{output_var} * {stride} + {reduce_var}" if stride != 1 else f"{output_var} + {reduce_var}"


def conv2d_nhwc(
    N: int,
    H: int,
    W: int,
    CI: int,
    CO: int,
    KH: int,
    KW: int,
    stride: int = 1,
    padding: int = 0,
    dtype: str = "float32",
) -> IRModule:
    """2-D convolution, NHWC input X, HWIO weights W, NHWC output Y; a pad block when padding > 0."""
    name = "conv2d_nhwc"
    _check_sizes(name, N=N, H=H, W=W, CI=CI, CO=CO, KH=KH, KW=KW, stride=stride)
    _check_sizes(name, minimum=0, padding=padding)
    _check_dtype(dtype, name)
    out = _output_dtype(dtype)
    OH = _conv_output_size(name, H, KH, stride, padding, "H")
    OW = _conv_output_size(name, W, KW, stride, padding, "W")
    params = [
        _buffer("X", (N, H, W, CI), dtype),
        _buffer("W", (KH, KW, CI, CO), dtype),
        _buffer("Y", (N, OH, OW, CO), out),
    ]
    pad, source = _pad_block(N, H, W, CI, padding, dtype)
    h, w = _window_index("vh", "vrh", stride), _window_index("vw", "vrw", stride)
    product = _product(f"{source}[vn, {h}, {w}, vrc]", "W[vrh, vrw, vrc, vco]", dtype)
    body = f"""\
        for n, h, w, co, rh, rw, rc in T.grid({N}, {OH}, {OW}, {CO}, {KH}, {KW}, {CI}):
            with T.block("Y"):
                vn, vh, vw, vco, vrh, vrw, vrc = T.axis.remap("SSSSRRR", [n, h, w, co, rh, rw, rc])
                with T.init():
                    Y[vn, vh, vw, vco] = T.{out}(0)
                Y[vn, vh, vw, vco] = Y[vn, vh, vw, vco] + {product}
"""
    return _module(_script(params, pad + body))


def depthwise_conv2d(
    N: int,
    H: int,
    W: int,
    C: int,
    KH: int,
    KW: int,
    stride: int = 1,
    padding: int = 0,
    dtype: str = "float32",
) -> IRModule:
    """Depthwise 2-D convolution, NHWC input X, weights W[KH, KW, C], one filter per channel."""
    name = "depthwise_conv2d"
    _check_sizes(name, N=N, H=H, W=W, C=C, KH=KH, KW=KW, stride=stride)
    _check_sizes(name, minimum=0, padding=padding)
    _check_dtype(dtype, name)
    out = _output_dtype(dtype)
    OH = _conv_output_size(name, H, KH, stride, padding, "H")
    OW = _conv_output_size(name, W, KW, stride, padding, "W")
    params = [
        _buffer("X", (N, H, W, C), dtype),
        _buffer("W", (KH, KW, C), dtype),
        _buffer("Y", (N, OH, OW, C), out),
    ]
    pad, source = _pad_block(N, H, W, C, padding, dtype)
    h, w = _window_index("vh", "vrh", stride), _window_index("vw", "vrw", stride)
    product = _product(f"{source}[vn, {h}, {w}, vc]", "W[vrh, vrw, vc]", dtype)
    body = f"""\
        for n, h, w, c, rh, rw in T.grid({N}, {OH}, {OW}, {C}, {KH}, {KW}):
            with T.block("Y"):
                vn, vh, vw, vc, vrh, vrw = T.axis.remap("SSSSRR", [n, h, w, c, rh, rw])
                with T.init():
                    Y[vn, vh, vw, vc] = T.{out}(0)
                Y[vn, vh, vw, vc] = Y[vn, vh, vw, vc] + {product}
"""
    return _module(_script(params, pad + body))


def conv_layer(N: int, H: int, W: int, CI: int, CO: int, dtype: str = "float32") -> IRModule:
    """Halide's conv_layer app (seed 003): a 3x3 convolution started from the bias, then a ReLU.

    Halide's layouts in C order: input[N, H + 2, W + 2, CI], filter[CI, 3, 3, CO] (indexed
    ``filter[rc, rh, rw, c]``), bias[CO], relu[N, H, W, CO]; block "conv" (a reduction whose
    init reads the bias) and block "relu".
    """
    _check_sizes("conv_layer", N=N, H=H, W=W, CI=CI, CO=CO)
    _check_dtype(dtype, "conv_layer")
    params = [
        _buffer("input", (N, H + 2, W + 2, CI), dtype),
        _buffer("filter", (CI, 3, 3, CO), dtype),
        _buffer("bias", (CO,), dtype),
        _buffer("relu", (N, H, W, CO), dtype),
    ]
    body = f"""\
        conv = T.alloc_buffer(({N}, {H}, {W}, {CO}), "{dtype}")
        for n, y, x, c, rz, ry, rx in T.grid({N}, {H}, {W}, {CO}, 3, 3, {CI}):
            with T.block("conv"):
                vn, vy, vx, vc, vrz, vry, vrx = T.axis.remap("SSSSRRR", [n, y, x, c, rz, ry, rx])
                with T.init():
                    conv[vn, vy, vx, vc] = bias[vc]
                conv[vn, vy, vx, vc] = conv[vn, vy, vx, vc] + filter[vrx, vrz, vry, vc] * input[
                    vn, vy + vrz, vx + vry, vrx
                ]
        for n, y, x, c in T.grid({N}, {H}, {W}, {CO}):
            with T.block("relu"):
                vn, vy, vx, vc = T.axis.remap("SSSS", [n, y, x, c])
                relu[vn, vy, vx, vc] = T.max(conv[vn, vy, vx, vc], T.{dtype}(0))
"""
    return _module(_script(params, body))


def softmax(M: int, N: int, dtype: str = "float32") -> IRModule:
    """Softmax of each row of A[M, N]: a row max block, an exp-sum block and a divide block."""
    _check_sizes("softmax", M=M, N=N)
    _check_dtype(dtype, "softmax")
    params = [_buffer("A", (M, N), dtype), _buffer("B", (M, N), dtype)]
    body = f"""\
        A_max = T.alloc_buffer(({M},), "{dtype}")
        A_sum = T.alloc_buffer(({M},), "{dtype}")
        for i, k in T.grid({M}, {N}):
            with T.block("A_max"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    A_max[vi] = T.min_value("{dtype}")
                A_max[vi] = T.max(A_max[vi], A[vi, vk])
        for i, k in T.grid({M}, {N}):
            with T.block("A_sum"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    A_sum[vi] = T.{dtype}(0)
                A_sum[vi] = A_sum[vi] + T.exp(A[vi, vk] - A_max[vi])
        for i, j in T.grid({M}, {N}):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = T.exp(A[vi, vj] - A_max[vi]) / A_sum[vi]
"""
    return _module(_script(params, body))


def reduction_sum(M: int, N: int, dtype: str = "float32") -> IRModule:
    """B[i] = sum over k of A[i, k]: a row sum, one reduction block "B"."""
    _check_sizes("reduction_sum", M=M, N=N)
    _check_dtype(dtype, "reduction_sum")
    params = [_buffer("A", (M, N), dtype), _buffer("B", (M,), dtype)]
    body = f"""\
        for i, k in T.grid({M}, {N}):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.{dtype}(0)
                B[vi] = B[vi] + A[vi, vk]
"""
    return _module(_script(params, body))


def layer_norm(M: int, N: int, dtype: str = "float32") -> IRModule:
    """Layer norm of each row of X[M, N] with gamma[N] and beta[N] (eps 1e-5): a row sum, a row sum of
    squares and the normalize block (variance as E[x^2] - E[x]^2)."""
    _check_sizes("layer_norm", M=M, N=N)
    _check_dtype(dtype, "layer_norm")
    params = [
        _buffer("X", (M, N), dtype),
        _buffer("gamma", (N,), dtype),
        _buffer("beta", (N,), dtype),
        _buffer("Y", (M, N), dtype),
    ]
    body = f"""\
        X_sum = T.alloc_buffer(({M},), "{dtype}")
        X_sq_sum = T.alloc_buffer(({M},), "{dtype}")
        for i, k in T.grid({M}, {N}):
            with T.block("X_sum"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    X_sum[vi] = T.{dtype}(0)
                X_sum[vi] = X_sum[vi] + X[vi, vk]
        for i, k in T.grid({M}, {N}):
            with T.block("X_sq_sum"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    X_sq_sum[vi] = T.{dtype}(0)
                X_sq_sum[vi] = X_sq_sum[vi] + X[vi, vk] * X[vi, vk]
        for i, j in T.grid({M}, {N}):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                Y[vi, vj] = (X[vi, vj] - X_sum[vi] * T.{dtype}({1 / N!r})) * T.rsqrt(
                    X_sq_sum[vi] * T.{dtype}({1 / N!r})
                    - X_sum[vi] * T.{dtype}({1 / N!r}) * (X_sum[vi] * T.{dtype}({1 / N!r}))
                    + T.{dtype}(1e-05)
                ) * gamma[vj] + beta[vj]
"""
    return _module(_script(params, body))


def elementwise_chain(N: int, dtype: str = "float32") -> IRModule:
    """C = relu(A + B) * B in three blocks (add, relu, multiply): the auto-inline case."""
    _check_sizes("elementwise_chain", N=N)
    _check_dtype(dtype, "elementwise_chain")
    params = [_buffer("A", (N,), dtype), _buffer("B", (N,), dtype), _buffer("C", (N,), dtype)]
    body = f"""\
        T_add = T.alloc_buffer(({N},), "{dtype}")
        T_relu = T.alloc_buffer(({N},), "{dtype}")
        for i in range({N}):
            with T.block("T_add"):
                vi = T.axis.spatial({N}, i)
                T_add[vi] = A[vi] + B[vi]
        for i in range({N}):
            with T.block("T_relu"):
                vi = T.axis.spatial({N}, i)
                T_relu[vi] = T.max(T_add[vi], T.{dtype}(0))
        for i in range({N}):
            with T.block("C"):
                vi = T.axis.spatial({N}, i)
                C[vi] = T_relu[vi] * B[vi]
"""
    return _module(_script(params, body))


def window_sum(N: int, dtype: str = "float32") -> IRModule:
    """B[i] = A[i] + A[i + 1] + A[i + 2] over A[N + 2] (the seed notebook's window sum)."""
    _check_sizes("window_sum", N=N)
    _check_dtype(dtype, "window_sum")
    params = [_buffer("A", (N + 2,), dtype), _buffer("B", (N,), dtype)]
    body = f"""\
        for i in range({N}):
            with T.block("B"):
                vi = T.axis.spatial({N}, i)
                B[vi] = A[vi] + A[vi + 1] + A[vi + 2]
"""
    return _module(_script(params, body))


# ---------------------------------------------------------------- numpy references
# Computed in float64 and rounded to the inputs' dtype, like the executor's stores.


def _rounded(value: np.ndarray, like: np.ndarray) -> list[np.ndarray]:
    return [value.astype(like.dtype)]


def _matmul_ref(a: np.ndarray, b: np.ndarray, **_: int) -> list[np.ndarray]:
    return _rounded(a.astype(np.float64) @ b.astype(np.float64), a)


def _matmul_bias_relu_ref(a: np.ndarray, b: np.ndarray, bias: np.ndarray, **_: int) -> list[np.ndarray]:
    wide = a.astype(np.float64) @ b.astype(np.float64) + bias.astype(np.float64)
    return _rounded(np.maximum(wide, 0.0), a)


def _padded(x: np.ndarray, padding: int) -> np.ndarray:
    pads = ((0, 0), (padding, padding), (padding, padding), (0, 0))
    return np.pad(x.astype(np.float64), pads)


def _windows(x: np.ndarray, kh: int, kw: int, stride: int) -> np.ndarray:
    """x[n, h*stride + rh, w*stride + rw, c] as an array [n, oh, ow, kh, kw, c]."""
    view = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(1, 2))
    return view[:, ::stride, ::stride].transpose(0, 1, 2, 4, 5, 3)


def _conv2d_nhwc_ref(
    x: np.ndarray, w: np.ndarray, *, stride: int = 1, padding: int = 0, **_: int
) -> list[np.ndarray]:
    windows = _windows(_padded(x, padding), w.shape[0], w.shape[1], stride)
    return _rounded(np.einsum("nhwijc,ijco->nhwo", windows, w.astype(np.float64)), x)


def _depthwise_conv2d_ref(
    x: np.ndarray, w: np.ndarray, *, stride: int = 1, padding: int = 0, **_: int
) -> list[np.ndarray]:
    windows = _windows(_padded(x, padding), w.shape[0], w.shape[1], stride)
    return _rounded(np.einsum("nhwijc,ijc->nhwc", windows, w.astype(np.float64)), x)


def _conv_layer_ref(x: np.ndarray, f: np.ndarray, bias: np.ndarray, **_: int) -> list[np.ndarray]:
    windows = _windows(x.astype(np.float64), 3, 3, 1)  # [n, y, x, rz, ry, rx]
    conv = np.einsum("nyxzwr,rzwc->nyxc", windows, f.astype(np.float64)) + bias.astype(np.float64)
    return _rounded(np.maximum(conv, 0.0), x)


def _softmax_ref(a: np.ndarray, **_: int) -> list[np.ndarray]:
    wide = a.astype(np.float64)
    e = np.exp(wide - wide.max(axis=1, keepdims=True))
    return _rounded(e / e.sum(axis=1, keepdims=True), a)


def _reduction_sum_ref(a: np.ndarray, **_: int) -> list[np.ndarray]:
    return _rounded(a.astype(np.float64).sum(axis=1), a)


def _layer_norm_ref(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, **_: int) -> list[np.ndarray]:
    wide = x.astype(np.float64)
    mean = wide.mean(axis=1, keepdims=True)
    variance = (wide * wide).mean(axis=1, keepdims=True) - mean * mean
    return _rounded((wide - mean) / np.sqrt(variance + 1e-5) * gamma + beta, x)


def _elementwise_chain_ref(a: np.ndarray, b: np.ndarray, **_: int) -> list[np.ndarray]:
    wide_b = b.astype(np.float64)
    return _rounded(np.maximum(a.astype(np.float64) + wide_b, 0.0) * wide_b, a)


def _window_sum_ref(a: np.ndarray, **_: int) -> list[np.ndarray]:
    wide = a.astype(np.float64)
    return _rounded(wide[:-2] + wide[1:-1] + wide[2:], a)


# ---------------------------------------------------------------- registry


@dataclass(frozen=True)
class Workload:
    """A built-in workload.

    ``function(*sizes, dtype=...)`` builds the IRModule; ``params`` names its
    sizes in order and ``required`` says how many of them must be given (the
    rest, such as a convolution's stride and padding, have defaults).
    ``reference(*inputs, **sizes)`` returns the expected output arrays from the
    input arrays (every buffer parameter but the last, which is the output) and
    the sizes by name (as :meth:`sizes` gives them).
    """

    name: str
    function: Callable[..., IRModule]
    params: tuple[str, ...]
    default_shape: tuple[int, ...]
    doc: str
    reference: Reference
    required: int

    def sizes(self, shape: str | Sequence[int] | None = None) -> dict[str, int]:
        """The sizes by name for ``shape`` (text such as "512,512,512", numbers, or None for the
        default), with the function's defaults for optional sizes left out of ``shape``."""
        numbers = self._numbers(shape)
        signature = inspect.signature(self.function)
        sizes = {name: signature.parameters[name].default for name in self.params[self.required :]}
        sizes.update(zip(self.params, numbers))
        return sizes

    def make(self, shape: str | Sequence[int] | None = None, dtype: str = "float32") -> IRModule:
        return self.function(**self.sizes(shape), dtype=dtype)

    def _numbers(self, shape: str | Sequence[int] | None) -> tuple[int, ...]:
        if shape is None:
            return self.default_shape
        text = shape if isinstance(shape, str) else ",".join(str(n) for n in shape)
        numbers = _parse_shape(self.name, shape) if isinstance(shape, str) else tuple(shape)
        if not self.required <= len(numbers) <= len(self.params):
            raise WorkloadError(
                f"{self.name} takes {self._size_count()} {self._size_list()}; got {len(numbers)}: {text!r}"
            )
        return numbers

    def _size_count(self) -> str:
        if self.required == len(self.params):
            return f"{self.required} size{'s' if self.required != 1 else ''}"
        return f"{self.required} to {len(self.params)} sizes"

    def _size_list(self) -> str:
        required = ",".join(self.params[: self.required])
        optional = "".join(f"[,{name}]" for name in self.params[self.required :])
        return required + optional


def _parse_shape(name: str, text: str) -> tuple[int, ...]:
    pieces = [piece.strip() for piece in text.split(",")]
    if pieces == [""]:
        return ()
    for piece in pieces:
        if not piece.lstrip("+").isdigit():
            raise WorkloadError(
                f"{name}: size {piece!r} in {text!r} is not a whole number; "
                "write the sizes as whole numbers separated by commas, e.g. '512,512,512'"
            )
    return tuple(int(piece) for piece in pieces)


def _workload(
    function: Callable[..., IRModule], default_shape: tuple[int, ...], reference: Reference
) -> Workload:
    signature = inspect.signature(function)
    params = tuple(name for name in signature.parameters if name != "dtype")
    required = sum(signature.parameters[name].default is inspect.Parameter.empty for name in params)
    doc = inspect.getdoc(function) or ""
    return Workload(function.__name__, function, params, default_shape, doc, reference, required)


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        _workload(matmul, (1024, 1024, 1024), _matmul_ref),
        _workload(matmul_bias_relu, (1024, 1024, 1024), _matmul_bias_relu_ref),
        _workload(batch_matmul, (16, 128, 128, 64), _matmul_ref),
        _workload(conv2d_nhwc, (1, 56, 56, 64, 64, 3, 3, 1, 1), _conv2d_nhwc_ref),
        _workload(depthwise_conv2d, (1, 112, 112, 32, 3, 3, 1, 1), _depthwise_conv2d_ref),
        _workload(conv_layer, (5, 80, 100, 128, 128), _conv_layer_ref),
        _workload(softmax, (1024, 1024), _softmax_ref),
        _workload(reduction_sum, (1024, 1024), _reduction_sum_ref),
        _workload(layer_norm, (1024, 1024), _layer_norm_ref),
        _workload(elementwise_chain, (1 << 20,), _elementwise_chain_ref),
        _workload(window_sum, (1024,), _window_sum_ref),
    )
}


def get_workload(name: str) -> Workload:
    """The built-in workload called ``name``; an unknown name lists the known ones."""
    try:
        return WORKLOADS[name]
    except (KeyError, TypeError):
        pass
    known = ", ".join(sorted(WORKLOADS))
    close = difflib.get_close_matches(str(name), WORKLOADS, n=1)
    suggestion = f"did you mean {close[0]!r}? " if close else ""
    raise WorkloadError(f"unknown workload {name!r}; {suggestion}known workloads: {known}")


def make(name: str, shape: str | Sequence[int] | None = None, dtype: str = "float32") -> IRModule:
    """The IRModule of workload ``name`` at ``shape`` ("512,512,512", numbers, or None for the
    workload's default shape) in ``dtype``."""
    return get_workload(name).make(shape, dtype)


def reference_for(
    name: str, shape: str | Sequence[int] | None = None, dtype: str = "float32"
) -> Callable[[list], list[np.ndarray]]:
    """The numpy reference of workload ``name`` at ``shape`` in ``dtype`` as ``tune(reference=...)``
    takes it: a function of the input arrays returning the expected outputs. bfloat16 arrays are
    uint16 bit patterns (tir/bfloat16.py): widened to float32 in, rounded back out where the
    workload's output is bfloat16."""
    workload = get_workload(name)
    sizes = workload.sizes(shape)

    def reference(arrays: list) -> list[np.ndarray]:
        if dtype != "bfloat16":
            return workload.reference(*arrays, **sizes)
        outputs = workload.reference(*[from_bfloat16_bits(a) for a in arrays], **sizes)
        if name in BFLOAT16_FLOAT32_OUTPUT:
            return outputs
        return [to_bfloat16_bits(output) for output in outputs]

    return reference
