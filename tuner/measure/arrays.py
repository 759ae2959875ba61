"""The arrays a measurement runs on, and the check of a candidate's outputs against the expected ones.

``Measurer`` (tuner/measure/__init__.py) draws one set of seeded random
arguments for the workload's main function (:func:`random_arguments`); the
runner process (tuner/measure/runner.py) gives every candidate fresh copies of
them with its outputs poisoned (:func:`fresh_arguments`: NaN for floats), so a
kernel that skips an element cannot pass, and compares what it wrote with
:func:`mismatch`, which says where and by how much a wrong kernel is off.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tir import Buffer, PrimFunc
from tir.bfloat16 import from_bfloat16_bits, to_bfloat16_bits
from tir.dtype import is_float
from tir.functor import post_order_visit
from tir.stmt import BufferStore

# (rtol, atol) per element type. float32: the inputs are positive (random_arguments), so sums do not
# cancel and a reordered sum of thousands of terms moves by about 1e-6; rtol 1e-4 still shows a term of
# one part in a thousand left out or counted twice (a 1152-term convolution's bias: a 1e-3
# tolerance let such a kernel through). float16 keeps 11 bits: summing a few dozen terms in another
# order (tiles, vectors) or with other rounding (CUDA's half operations, C's float intermediates)
# moves the result by about 1%, so its tolerance is 1e-2, and it grows with the
# square root of the number of terms per output beyond FLOAT16_TERMS (rounding errors add up
# like a random walk).
# bfloat16 keeps 8 bits, so its tolerance is three times float16's and grows the same way. numpy
# has no bfloat16: its arrays are uint16 bit patterns (tir/bfloat16.py), compared as values.
TOLERANCES = {
    "float16": (1e-2, 1e-2),
    "bfloat16": (3e-2, 3e-2),
    "float32": (1e-4, 1e-4),
    "float64": (1e-3, 1e-3),
}
HALF_TYPES = ("float16", "bfloat16")
FLOAT16_TERMS = 64
EXACT = (0.0, 0.0)


class ArgumentError(ValueError):
    """The workload's function cannot be given random arguments (a shape that is not constant)."""


def written_params(func: PrimFunc) -> list[int]:
    """Indices of the buffer parameters that ``func`` stores to: its outputs."""
    stored: set[Buffer] = set()
    post_order_visit(func.body, lambda n: stored.add(n.buffer) if isinstance(n, BufferStore) else None)
    return [i for i, param in enumerate(func.params) if isinstance(param, Buffer) and param in stored]


def random_arguments(func: PrimFunc, seed: int) -> list:
    """Seeded arguments for every parameter of ``func``: floats in [0.5, 1.5), integers in [1, 8).

    Inputs stay away from zero so that divisions and logarithms in a workload stay finite.
    """
    rng = np.random.default_rng(seed)
    arguments = []
    for param in func.params:
        if not isinstance(param, Buffer):
            arguments.append(np.dtype(param.dtype).type(_random(rng, param.dtype, ())))
            continue
        shape = param.static_shape()
        if shape is None:
            dims = ", ".join(str(d) for d in param.shape)
            raise ArgumentError(
                f"cannot measure {func.name}: buffer {param.name} has shape ({dims}), which is not "
                "constant; tune a version of the workload with every dimension given a size"
            )
        arguments.append(_random(rng, param.dtype, shape))
    return arguments


def _random(rng: np.random.Generator, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    if dtype == "bfloat16":
        return to_bfloat16_bits(rng.uniform(0.5, 1.5, shape))
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if is_float(dtype):
        return rng.uniform(0.5, 1.5, shape).astype(dtype)
    return rng.integers(1, 8, shape).astype(dtype)


def fresh_arguments(arguments: Sequence, poisoned: Sequence[int]) -> list:
    """Copies of ``arguments`` with the arrays at ``poisoned`` filled with a value no kernel computes."""
    fresh = [argument.copy() for argument in arguments]
    for index in poisoned:
        fresh[index].fill(_poison(fresh[index].dtype))
    return fresh


def _poison(dtype: np.dtype):
    if dtype.kind == "f":
        return np.nan
    if dtype.kind in "iu":
        return np.iinfo(dtype).max
    return True


def tolerance(dtype: np.dtype | str, terms: float = 1.0) -> tuple[float, float]:
    """(rtol, atol) for outputs of ``dtype`` that each sum about ``terms`` products."""
    name = dtype if dtype == "bfloat16" else np.dtype(dtype).name
    rtol, atol = TOLERANCES.get(name, EXACT)
    if name in HALF_TYPES:
        scale = max(1.0, terms / FLOAT16_TERMS) ** 0.5
        return rtol * scale, atol * scale
    return rtol, atol


def mismatch(
    name: str, actual: np.ndarray, expected: np.ndarray, terms: float = 1.0, dtype: str | None = None
) -> str | None:
    """``None`` when ``actual`` matches ``expected`` within the dtype's tolerance, else what differs.

    ``dtype`` is the output's IR dtype where the arrays' own does not say it: "bfloat16" for
    uint16 bit patterns, which are compared as the values they hold.
    """
    if actual.shape != expected.shape:
        return f"output {name} has shape {actual.shape}, expected {expected.shape}"
    rtol, atol = tolerance(dtype if dtype == "bfloat16" else expected.dtype, terms)
    if dtype == "bfloat16":
        actual, expected = from_bfloat16_bits(actual), from_bfloat16_bits(expected)
    wide_actual, wide_expected = actual.astype(np.float64), expected.astype(np.float64)
    close = np.isclose(wide_actual, wide_expected, rtol=rtol, atol=atol, equal_nan=True)
    if close.all():
        return None
    wrong = np.argwhere(~close)
    first = tuple(int(i) for i in wrong[0])
    error = np.abs(wide_actual - wide_expected)
    unwritten = int(np.isnan(wide_actual[~close]).sum())
    text = (
        f"output {name} differs from the reference at {len(wrong)} of {expected.size} elements: "
        f"max abs error {np.nanmax(error) if unwritten < len(wrong) else float('nan'):.6g}; "
        f"first at index {first}: got {_show(actual[first])}, expected {_show(expected[first])} "
        f"(rtol={rtol:g}, atol={atol:g})"
    )
    if unwritten:
        text += f"; {unwritten} of the wrong elements are NaN, the value outputs start with (never written?)"
    return text


def _show(value: np.generic) -> str:
    plain = value.item()
    return f"{plain:.7g}" if isinstance(plain, float) else repr(plain)
