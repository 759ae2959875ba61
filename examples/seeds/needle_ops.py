"""Needle's NDArray backend operators (seed 004) as TVMScript programs, GPU schedules, numpy references.

Seed 004 writes each operator of Needle's array backend as a hand-made Metal
kernel. Here each one is a TVMScript program, made for any static shape (our
IR has static shapes, so "shape-generic" means one function per operator that
formats the program for the shapes it is given), then scheduled for a GPU:

- elementwise and scalar ``add mul div power maximum eq ge`` and unary
  ``log exp tanh``: the loops fused, split into 128-thread blocks, bound to
  blockIdx.x/threadIdx.x; the second operand of an elementwise op may
  broadcast (numpy's rules: missing or size-1 dimensions);
- ``reduce_sum``/``reduce_max`` over the last axis of a compact array: one
  thread per output element;
- ``matmul``: 16x16 output tiles per threadgroup (smaller when 16 does not
  divide the sizes), A and B tiles staged in threadgroup (shared) memory by all
  the block's threads, one output per thread;
- ``compact`` (strided gather: ``out[i] = a[offset + i . strides]``),
  ``ewise_setitem`` and ``scalar_setitem`` (strided scatter into ``out``, the
  rest of ``out`` untouched), the way Needle makes views contiguous.

``OPERATORS[name](shapes...)`` returns an :class:`Operator` with the program,
its GPU schedule and a numpy reference; tests/codegen/test_needle_ops.py runs
every one on the Metal simulator, compiles it for CUDA, and runs it on a GPU
where one is present; ``examples/seeds/seed004_needle_metal.py`` is the tour.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

import tir
from schedule import Schedule

THREADS = 128
MATMUL_TILE = 16

BINARY = {
    "add": ("{a} + {b}", np.add),
    "mul": ("{a} * {b}", np.multiply),
    "div": ("{a} / {b}", np.divide),
    "power": ("{a} ** {b}", np.power),
    "maximum": ("T.max({a}, {b})", np.maximum),
    "eq": ('T.Cast("float32", {a} == {b})', lambda a, b: (a == b).astype(a.dtype)),
    "ge": ('T.Cast("float32", {a} >= {b})', lambda a, b: (a >= b).astype(a.dtype)),
}
UNARY = {"log": ("T.log({a})", np.log), "exp": ("T.exp({a})", np.exp), "tanh": ("T.tanh({a})", np.tanh)}


@dataclass(frozen=True)
class Operator:
    """One operator at fixed shapes: its program, a function scheduling it for a GPU, its reference.

    ``reference(*arguments)`` returns the expected value of the last array argument
    given all the arguments (the output's old contents matter for setitem).
    """

    name: str
    program: tir.IRModule
    schedule: Callable[[tir.IRModule], Schedule]
    reference: Callable[..., np.ndarray]

    def scheduled(self) -> tir.IRModule:
        return self.schedule(self.program).mod


# ---------------------------------------------------------------- TVMScript text


def _parse(params: Sequence[str], body: str) -> tir.IRModule:
    header = "@I.ir_module\nclass Module:\n    @T.prim_func\n    def main(" + ", ".join(params) + "):\n"
    header += '        T.func_attr({"global_symbol": "main", "tir.noalias": True})\n'
    return tir.parse(header + body, filename="<needle_ops>")


def _buffer(name: str, shape: Sequence[int]) -> str:
    return f'{name}: T.Buffer(({", ".join(str(int(d)) for d in shape)},), "float32")'


def _spatial(block: str, shape: Sequence[int], statement: str) -> str:
    """A spatial loop nest over ``shape`` with block vars v0, v1, ... around ``statement``."""
    loops = ", ".join(f"i{d}" for d in range(len(shape)))
    block_vars = ", ".join(f"v{d}" for d in range(len(shape)))
    extents = ", ".join(str(int(d)) for d in shape)
    return (
        f"        for {loops} in T.grid({extents}):\n"
        f'            with T.block("{block}"):\n'
        f'                {block_vars} = T.axis.remap("{"S" * len(shape)}", [{loops}])\n'
        f"                {statement}\n"
    )


def _index(names: Sequence[str]) -> str:
    return ", ".join(names)


def _broadcast_index(shape: Sequence[int], b_shape: Sequence[int]) -> str:
    """Indices of B (numpy-broadcast against ``shape``) in terms of v0, v1, ..."""
    skip = len(shape) - len(b_shape)
    if skip < 0 or any(b not in (1, s) for b, s in zip(b_shape, shape[skip:])):
        raise ValueError(f"shape {tuple(b_shape)} does not broadcast to {tuple(shape)}")
    return _index(["0" if b == 1 else f"v{skip + d}" for d, b in enumerate(b_shape)])


def _strided(shape: Sequence[int], strides: Sequence[int], offset: int) -> str:
    return " + ".join([str(offset), *(f"v{d} * {s}" for d, s in enumerate(strides))])


# ---------------------------------------------------------------- programs


def ewise(op: str, shape: Sequence[int], b_shape: Sequence[int] | None = None) -> Operator:
    """``out = a <op> b`` elementwise; ``b`` may broadcast to ``shape``."""
    b_shape = tuple(shape) if b_shape is None else tuple(b_shape)
    text, numpy_op = BINARY[op]
    a, b = f"A[{_index([f'v{d}' for d in range(len(shape))])}]", f"B[{_broadcast_index(shape, b_shape)}]"
    out = f"out[{_index([f'v{d}' for d in range(len(shape))])}]"
    program = _parse(
        [_buffer("A", shape), _buffer("B", b_shape), _buffer("out", shape)],
        _spatial("out", shape, f"{out} = {text.format(a=a, b=b)}"),
    )
    return Operator(f"ewise_{op}", program, schedule_elementwise, lambda x, y, _: numpy_op(x, y))


def scalar(op: str, shape: Sequence[int]) -> Operator:
    """``out = a <op> val`` for a scalar ``val``."""
    text, numpy_op = BINARY[op]
    index = _index([f"v{d}" for d in range(len(shape))])
    program = _parse(
        [_buffer("A", shape), "val: T.float32", _buffer("out", shape)],
        _spatial("out", shape, f"out[{index}] = {text.format(a=f'A[{index}]', b='val')}"),
    )
    return Operator(
        f"scalar_{op}",
        program,
        schedule_elementwise,
        lambda x, v, _: numpy_op(x, np.float32(v)).astype(x.dtype),
    )


def unary(op: str, shape: Sequence[int]) -> Operator:
    """``out = op(a)`` elementwise."""
    text, numpy_op = UNARY[op]
    index = _index([f"v{d}" for d in range(len(shape))])
    program = _parse(
        [_buffer("A", shape), _buffer("out", shape)],
        _spatial("out", shape, f"out[{index}] = {text.format(a=f'A[{index}]')}"),
    )
    return Operator(f"ewise_{op}", program, schedule_elementwise, lambda x, _: numpy_op(x))


def reduce(op: str, outer: int, reduce_size: int) -> Operator:
    """``out[i] = sum/max of a[i, :]`` (Needle reduces the last axis of a compact array)."""
    init, update, numpy_op = {
        "sum": ("T.float32(0)", "out[vi] + A[vi, vk]", np.sum),
        "max": ('T.min_value("float32")', "T.max(out[vi], A[vi, vk])", np.max),
    }[op]
    body = (
        f"        for i, k in T.grid({outer}, {reduce_size}):\n"
        '            with T.block("out"):\n'
        '                vi, vk = T.axis.remap("SR", [i, k])\n'
        "                with T.init():\n"
        f"                    out[vi] = {init}\n"
        f"                out[vi] = {update}\n"
    )
    program = _parse([_buffer("A", (outer, reduce_size)), _buffer("out", (outer,))], body)
    return Operator(f"reduce_{op}", program, schedule_reduction, lambda x, _: numpy_op(x, axis=1))


def matmul(m: int, n: int, p: int) -> Operator:
    """``out[m, p] = a[m, n] @ b[n, p]`` (Needle's names), tiled for threadgroup memory."""
    body = (
        f"        for i, j, k in T.grid({m}, {p}, {n}):\n"
        '            with T.block("out"):\n'
        '                vi, vj, vk = T.axis.remap("SSR", [i, j, k])\n'
        "                with T.init():\n"
        "                    out[vi, vj] = T.float32(0)\n"
        "                out[vi, vj] = out[vi, vj] + A[vi, vk] * B[vk, vj]\n"
    )
    program = _parse([_buffer("A", (m, n)), _buffer("B", (n, p)), _buffer("out", (m, p))], body)
    return Operator("matmul", program, schedule_matmul, lambda x, y, _: x @ y)


def compact(in_size: int, shape: Sequence[int], strides: Sequence[int], offset: int) -> Operator:
    """``out[idx] = a[offset + idx . strides]``: a strided (or stride-0, broadcast) view made contiguous."""
    index = _index([f"v{d}" for d in range(len(shape))])
    program = _parse(
        [_buffer("A", (in_size,)), _buffer("out", shape)],
        _spatial("out", shape, f"out[{index}] = A[{_strided(shape, strides, offset)}]"),
    )
    return Operator(
        "compact", program, schedule_elementwise, lambda a, _: _view(a, shape, strides, offset).copy()
    )


def ewise_setitem(out_size: int, shape: Sequence[int], strides: Sequence[int], offset: int) -> Operator:
    """``out[offset + idx . strides] = a[idx]``: assignment to a strided view."""
    index = _index([f"v{d}" for d in range(len(shape))])
    program = _parse(
        [_buffer("A", shape), _buffer("out", (out_size,))],
        _spatial("out", shape, f"out[{_strided(shape, strides, offset)}] = A[{index}]"),
    )

    def reference(a: np.ndarray, out: np.ndarray) -> np.ndarray:
        expected = out.copy()
        _view(expected, shape, strides, offset)[...] = a
        return expected

    return Operator("ewise_setitem", program, schedule_elementwise, reference)


def scalar_setitem(out_size: int, shape: Sequence[int], strides: Sequence[int], offset: int) -> Operator:
    """``out[offset + idx . strides] = val`` for every index of ``shape``."""
    program = _parse(
        ["val: T.float32", _buffer("out", (out_size,))],
        _spatial("out", shape, f"out[{_strided(shape, strides, offset)}] = val"),
    )

    def reference(val: float, out: np.ndarray) -> np.ndarray:
        expected = out.copy()
        _view(expected, shape, strides, offset)[...] = val
        return expected

    return Operator("scalar_setitem", program, schedule_elementwise, reference)


def _view(flat: np.ndarray, shape: Sequence[int], strides: Sequence[int], offset: int) -> np.ndarray:
    item = flat.itemsize
    return np.lib.stride_tricks.as_strided(flat[offset:], tuple(shape), tuple(s * item for s in strides))


# ---------------------------------------------------------------- inputs


def random_arguments(op: Operator, rng: np.random.Generator) -> list:
    """Arguments for ``op`` in its operator's domain; the output is NaN unless its old contents matter."""
    kind = op.name.split("_", 1)[-1]
    args: list = []
    params = op.program["main"].params
    for position, param in enumerate(params):
        last = position == len(params) - 1
        if not hasattr(param, "shape"):
            args.append(float(_draw(kind, rng, (), position)))
            continue
        shape = tuple(int(d.value) for d in param.shape)
        if last and "setitem" not in op.name:
            args.append(np.full(shape, np.nan, "float32"))
        else:
            args.append(_draw(kind, rng, shape, position).astype("float32"))
    return args


def _draw(kind: str, rng: np.random.Generator, shape: tuple, position: int) -> np.ndarray:
    """log wants positive numbers, power a positive base, div no tiny divisors, eq and ge ties."""
    if kind == "log" or (kind == "power" and position == 0):
        return rng.uniform(0.1, 4.0, shape)
    if kind == "div" and position == 1:
        return rng.uniform(0.5, 2.0, shape) * rng.choice([-1.0, 1.0], shape)
    if kind in ("eq", "ge"):
        return rng.integers(0, 3, shape).astype(np.float64)
    if kind in ("exp", "tanh"):
        return rng.uniform(-10.0, 10.0, shape)
    return rng.uniform(-2.0, 2.0, shape)


# ---------------------------------------------------------------- GPU schedules


def schedule_elementwise(mod: tir.IRModule) -> Schedule:
    """All loops fused, then 128 threads per block: blockIdx.x, threadIdx.x."""
    sch = Schedule(mod)
    block = sch.get_block("out")
    loops = sch.get_loops(block)
    fused = sch.fuse(*loops) if len(loops) > 1 else loops[0]
    blocks, threads = sch.split(fused, [None, THREADS])
    sch.bind(blocks, "blockIdx.x")
    sch.bind(threads, "threadIdx.x")
    return sch


def schedule_reduction(mod: tir.IRModule) -> Schedule:
    """One thread per output element: its initial value, then the reduction loop."""
    sch = Schedule(mod)
    block = sch.get_block("out")
    i, k = sch.get_loops(block)
    blocks, threads = sch.split(i, [None, min(THREADS, _extent(sch, i))])
    sch.bind(blocks, "blockIdx.x")
    sch.bind(threads, "threadIdx.x")
    sch.decompose_reduction(block, k)
    return sch


def schedule_matmul(mod: tir.IRModule) -> Schedule:
    """Square output tiles per threadgroup (16x16, or the largest power of two that divides every
    dimension, since each thread fetches one element of the A and B tiles into shared memory)."""
    sch = Schedule(mod)
    block = sch.get_block("out")
    i, j, k = sch.get_loops(block)
    tile = MATMUL_TILE
    while any(_extent(sch, loop) % tile for loop in (i, j, k)):
        tile //= 2
    i0, i1 = sch.split(i, [None, tile])
    j0, j1 = sch.split(j, [None, tile])
    k0, k1 = sch.split(k, [None, tile])
    sch.reorder(i0, j0, i1, j1, k0, k1)
    sch.bind(i0, "blockIdx.y")
    sch.bind(j0, "blockIdx.x")
    sch.bind(i1, "threadIdx.y")
    sch.bind(j1, "threadIdx.x")
    for index in (0, 1):
        cache = sch.cache_read(block, index, "shared")
        sch.compute_at(cache, k0)
        rows, cols = sch.get_loops(cache)[-2:]
        sch.bind(rows, "threadIdx.y")
        sch.bind(cols, "threadIdx.x")
    return sch


def _extent(sch: Schedule, loop) -> int:
    return int(sch.get(loop).extent.value)


OPERATORS: dict[str, Callable[..., Operator]] = {
    **{f"ewise_{op}": functools.partial(ewise, op) for op in BINARY},
    **{f"scalar_{op}": functools.partial(scalar, op) for op in BINARY},
    **{f"ewise_{op}": functools.partial(unary, op) for op in UNARY},
    "reduce_sum": functools.partial(reduce, "sum"),
    "reduce_max": functools.partial(reduce, "max"),
    "matmul": matmul,
    "compact": compact,
    "ewise_setitem": ewise_setitem,
    "scalar_setitem": scalar_setitem,
}
