"""bfloat16 in scripts and in the executor, and the conversions of tir/bfloat16.py.

The rounding is checked against an independent bit-exact numpy implementation
(the float32 bit trick every framework uses: add 0x7FFF plus the lowest kept
bit, drop the low half; a NaN becomes the quiet NaN of its sign, as in Eigen and ml_dtypes) on random float32
bit patterns, which cover NaNs, infinities, subnormals and ties, plus named
cases. The executor rounds on every store of a bfloat16 buffer: stores of sums
of two bfloat16 values (exact in double) are compared bit for bit.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import tir
from tir import T
from tir.bfloat16 import (
    bfloat16_bits,
    bfloat16_value,
    from_bfloat16_bits,
    round_to_bfloat16,
    to_bfloat16_bits,
)
from tir.interpret import ArgumentError


def reference_bits(values: np.ndarray) -> np.ndarray:
    """Bit-exact float32 -> bfloat16 round to nearest even, the bit trick way; NaN -> sign | 0x7FC0."""
    words = np.asarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((words + 0x7FFF + ((words >> 16) & 1)) >> 16).astype(np.uint16)
    nan = (words & 0x7FFFFFFF) > 0x7F800000
    return np.where(nan, ((words >> 16) & 0x8000 | 0x7FC0).astype(np.uint16), rounded)


def random_float32_patterns(count: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    words = rng.integers(0, 2**32, count, dtype=np.uint64).astype(np.uint32)
    # Force ties (low half exactly 0x8000) and subnormals into the sample.
    words[: count // 4] = (words[: count // 4] & 0xFFFF0000) | 0x8000
    words[count // 4 : count // 2] &= 0x807FFFFF
    return words.view(np.float32)


NAMED = {
    "one": (1.0, 0x3F80),
    "tie to even, down": (1.00390625, 0x3F80),  # 1 + 2**-8: halfway between 1 and 1 + 2**-7
    "tie to even, up": (1.01171875, 0x3F82),  # 1 + 3 * 2**-8: halfway, rounds to the even 0x3F82
    "just above a tie": (float.fromhex("0x1.0100002p0"), 0x3F81),
    "negative zero": (-0.0, 0x8000),
    "infinity": (math.inf, 0x7F80),
    "minus infinity": (-math.inf, 0xFF80),
    "largest finite": (float.fromhex("0x1.fep127"), 0x7F7F),
    "overflow to infinity": (float.fromhex("0x1.ffp127"), 0x7F80),
    "smallest subnormal": (2.0**-133, 0x0001),
    "below half the smallest subnormal": (2.0**-135, 0x0000),
    "negative, rounds to negative zero": (-(2.0**-135), 0x8000),
    "largest subnormal": (2.0**-126 - 2.0**-133, 0x007F),
    "nan": (math.nan, 0x7FC0),
    "negative nan": (-math.nan, 0xFFC0),
}


@pytest.mark.parametrize("case", NAMED, ids=str)
def test_named_roundings(case):
    value, bits = NAMED[case]
    assert bfloat16_bits(value) == bits
    assert int(to_bfloat16_bits(np.array([value]))[0]) == bits


def test_array_rounding_matches_bit_exact_reference():
    values = random_float32_patterns(200_000)
    np.testing.assert_array_equal(to_bfloat16_bits(values), reference_bits(values))


def test_scalar_rounding_matches_bit_exact_reference():
    values = random_float32_patterns(5_000, seed=1)
    expected = reference_bits(values)
    actual = np.array([bfloat16_bits(float(v)) for v in values], dtype=np.uint16)
    np.testing.assert_array_equal(actual, expected)


def test_float64_rounds_once():
    # 1 + 2**-8 + 2**-30 is above the tie; through float32 it would become the tie and round down.
    value = 1.0 + 2.0**-8 + 2.0**-30
    assert round_to_bfloat16(value) == 1.0 + 2.0**-7
    assert int(to_bfloat16_bits(np.array([value]))[0]) == 0x3F81


def test_bits_round_trip_exactly():
    bits = np.arange(65536, dtype=np.uint16)
    values = from_bfloat16_bits(bits)
    finite = np.isfinite(values)
    np.testing.assert_array_equal(to_bfloat16_bits(values)[finite], bits[finite])
    assert all(bfloat16_value(int(b)) == float(values[b]) for b in range(0, 65536, 257) if finite[b])


@T.prim_func
def bf16_add(A: T.Buffer((64,), "bfloat16"), B: T.Buffer((64,), "bfloat16"), C: T.Buffer((64,), "bfloat16")):
    for i in range(64):
        with T.block("C"):
            vi = T.axis.spatial(64, i)
            C[vi] = A[vi] + B[vi]


@T.prim_func
def bf16_matmul(
    A: T.Buffer((16, 32), "bfloat16"), B: T.Buffer((32, 8), "bfloat16"), C: T.Buffer((16, 8), "float32")
):
    for i, j, k in T.grid(16, 8, 32):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + T.Cast("float32", A[vi, vk]) * T.Cast("float32", B[vk, vj])


@T.prim_func
def bf16_cast(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "bfloat16")):
    for i in range(64):
        with T.block("B"):
            vi = T.axis.spatial(64, i)
            B[vi] = T.bfloat16(A[vi]) * T.bfloat16(1.5)


def test_script_round_trip():
    for func in (bf16_add, bf16_matmul, bf16_cast):
        tir.assert_structural_equal(tir.parse(func.script()), func)
    assert 'T.Buffer((64,), "bfloat16")' in bf16_add.script()
    assert "T.bfloat16(1.5)" in bf16_cast.script()


def test_store_rounds_to_nearest_even_bit_exactly():
    rng = np.random.default_rng(0)
    a = to_bfloat16_bits(rng.uniform(-4, 4, 64))
    b = to_bfloat16_bits(rng.uniform(-4, 4, 64) * 2.0 ** rng.integers(-12, 12, 64))
    c = np.zeros(64, np.uint16)
    tir.interpret(bf16_add, a, b, c)
    exact = from_bfloat16_bits(a).astype(np.float64) + from_bfloat16_bits(b)
    np.testing.assert_array_equal(c, to_bfloat16_bits(exact))


def test_float32_arrays_in_and_out():
    rng = np.random.default_rng(1)
    a, b = rng.uniform(-1, 1, (16, 32)).astype(np.float32), rng.uniform(-1, 1, (32, 8)).astype(np.float32)
    c = np.full((16, 8), np.nan, np.float32)
    a_before = a.copy()
    tir.interpret(bf16_matmul, a, b, c)
    np.testing.assert_array_equal(a, a_before)  # inputs are read, rounded, never written back
    rounded_a, rounded_b = (from_bfloat16_bits(to_bfloat16_bits(x)).astype(np.float64) for x in (a, b))
    np.testing.assert_allclose(c, rounded_a @ rounded_b, rtol=1e-5, atol=1e-5)


def test_float32_output_holds_bfloat16_values():
    rng = np.random.default_rng(2)
    a = rng.uniform(-100, 100, 64).astype(np.float32)
    b = np.full(64, np.nan, np.float32)
    tir.interpret(bf16_cast, a, b)
    expected = from_bfloat16_bits(to_bfloat16_bits(from_bfloat16_bits(to_bfloat16_bits(a)) * 1.5))
    np.testing.assert_array_equal(b, expected)


def test_wrong_array_dtype_says_what_to_pass():
    a = np.zeros(64, np.float64)
    with pytest.raises(ArgumentError, match="takes a float32 array .* uint16 array of bfloat16 bit patterns"):
        tir.interpret(bf16_add, a, a, a)


def test_ml_dtypes_bfloat16_arrays_are_used_in_place():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng(3)
    a = rng.uniform(-4, 4, 64).astype(ml_dtypes.bfloat16)
    b = rng.uniform(-4, 4, 64).astype(ml_dtypes.bfloat16)
    c = np.zeros(64, ml_dtypes.bfloat16)
    tir.interpret(bf16_add, a, b, c)
    np.testing.assert_array_equal(
        c.view(np.uint16), to_bfloat16_bits(a.astype(np.float64) + b.astype(np.float64))
    )
    np.testing.assert_array_equal(to_bfloat16_bits(a.astype(np.float32)), a.view(np.uint16))
