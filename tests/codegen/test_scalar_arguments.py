"""Scalar parameters get exactly their declared dtype on every target (codegen/scalars.py).

One program, ``B = A * alpha + n`` with ``alpha: float32`` and ``n: int32``,
called with Python numbers, numpy scalars wider than the parameter and 0-d
arrays, on C, the Metal host simulator and the Metal runtime over the PyObjC
stand-in (CUDA: ``test_gpu.py`` runs ``check_scalar_kinds`` on the device). Values
that do not fit are errors before anything runs, on every target.
"""

from __future__ import annotations

import numpy as np
import pytest

from codegen import build
from codegen.scalars import scalar_argument
from schedule import Schedule
from tests.codegen import metal_standin
from tir import T

SIZE = 256
SCALAR_KINDS = {
    "python numbers": (1.5, -3),
    "wider numpy scalars": (np.float64(1.5), np.int64(-3)),
    "exact numpy scalars": (np.float32(1.5), np.int32(-3)),
    "0-d arrays": (np.array(1.5), np.array(-3, dtype=np.int16)),
}
TARGETS = [("c", None), ("metal", "sim"), ("metal", "standin")]


@T.prim_func
def affine(A: T.Buffer((SIZE,), "float32"), B: T.Buffer((SIZE,), "float32"), alpha: T.float32, n: T.int32):
    for i in range(SIZE):
        with T.block("B"):
            vi = T.axis.spatial(SIZE, i)
            B[vi] = A[vi] * alpha + T.Cast("float32", n)


def affine_on_threads():
    """``affine`` with its loop split over 4 threadgroups of 64 threads (runs on every target)."""
    sch = Schedule(affine)
    (i,) = sch.get_loops(sch.get_block("B"))
    outer, inner = sch.split(i, [None, 64])
    sch.bind(outer, "blockIdx.x")
    sch.bind(inner, "threadIdx.x")
    return sch.mod


def check_scalar_kinds(target: str, device: str | None) -> None:
    """Every kind of scalar gives numpy's float32 answer on ``target``."""
    module = build(affine_on_threads(), target, device=device)
    a = np.random.default_rng(3).standard_normal(SIZE).astype(np.float32)
    for kind, (alpha, n) in SCALAR_KINDS.items():
        b = np.full(SIZE, np.nan, dtype=np.float32)
        module["main"](a, b, alpha, n)
        np.testing.assert_allclose(b, a * np.float32(1.5) - np.float32(3), rtol=1e-6, atol=1e-6, err_msg=kind)


def _device(device: str | None, monkeypatch) -> str | None:
    if device == "standin":
        metal_standin.install(monkeypatch)
        return None
    return device


@pytest.mark.parametrize("target, device", TARGETS, ids=lambda t: str(t))
def test_scalars_of_every_kind_are_converted(target, device, monkeypatch):
    check_scalar_kinds(target, _device(device, monkeypatch))


@pytest.mark.parametrize("target, device", TARGETS, ids=lambda t: str(t))
@pytest.mark.parametrize(
    "alpha, n, error, phrase",
    [
        (1.5, 2**31, ValueError, r"argument 3 \(n\) is an int32 scalar, but 2147483648 is outside its range"),
        (1.5, 2.0, TypeError, r"argument 3 \(n\) is an int32 scalar; got the float 2.0; pass an int"),
        (1e39, 1, ValueError, r"argument 2 \(alpha\) is a float32 scalar, but 1e\+39 is beyond"),
        (True, 1, TypeError, r"argument 2 \(alpha\) is a float32 scalar; got the bool True"),
        ("1.5", 1, TypeError, r"argument 2 \(alpha\) is a float32 scalar; got str '1.5'"),
    ],
)
def test_a_scalar_that_does_not_fit_is_an_error(target, device, alpha, n, error, phrase, monkeypatch):
    module = build(affine_on_threads(), target, device=_device(device, monkeypatch))
    b = np.zeros(SIZE, dtype=np.float32)
    with pytest.raises(error, match=phrase):
        module["main"](np.ones(SIZE, dtype=np.float32), b, alpha, n)
    assert not b.any(), "nothing ran"


def test_runtimes_convert_too_when_called_directly():
    """A runtime's own ``run`` (the tuner's path, no Module in between) converts the same way."""
    module = build(affine_on_threads(), "metal", device="sim")
    a, b = np.ones(SIZE, dtype=np.float32), np.zeros(SIZE, dtype=np.float32)
    module.loaded.run("main", [a, b, np.float64(0.25), np.int64(2)])
    np.testing.assert_array_equal(b, np.full(SIZE, 2.25, dtype=np.float32))
    with pytest.raises(ValueError, match="main: n is an int32 scalar"):
        module.loaded.run("main", [a, b, 0.25, 2**40])


@pytest.mark.parametrize(
    "dtype, value, expected",
    [
        ("float16", 0.1, np.float16(0.1)),
        ("uint8", np.uint64(255), np.uint8(255)),
        ("int64", 2**40, np.int64(2**40)),
        ("bool", np.bool_(True), np.True_),
        ("float32", float("-inf"), np.float32("-inf")),
    ],
)
def test_scalar_argument_keeps_the_value_in_the_declared_dtype(dtype, value, expected):
    converted = scalar_argument(dtype, value, "f: argument x")
    assert converted.dtype == np.dtype(dtype)
    assert converted == expected
