"""bfloat16 without numpy support: conversions between float values and bfloat16 bit patterns.

bfloat16 is float32 with the low 16 bits dropped (1 sign, 8 exponent, 7 fraction
bits). numpy has no such dtype, so everything that holds bfloat16 data outside a
kernel (the executor's storage, the runtimes' host arrays, CuPy device arrays) holds
its ``uint16`` bit patterns. Every conversion into bfloat16 rounds to nearest,
ties to even, keeps infinities and signed zeros, gives subnormals (down to 2**-133)
like float32 does, overflows to infinity, and turns any NaN into the quiet NaN of
its sign (0x7FC0 or 0xFFC0, as Eigen and ``ml_dtypes.bfloat16`` do; CUDA's
``__float2bfloat16_rn`` gives 0x7FFF, also a NaN). The rounding is computed from the value (``frexp``
and round-half-even at the bfloat16 quantum), so float64 inputs round once, not
twice through float32. Users pass bfloat16 arguments as ``uint16`` bit arrays or
``ml_dtypes.bfloat16`` arrays (both used in place) or as float32 arrays (rounded
on the way in, written back widened exactly on the way out):
:func:`bfloat16_argument` is the one place that decides, for the executor and
every runtime.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable

import numpy as np

# The smallest bfloat16 quantum: the subnormal spacing 2**-126 * 2**-7.
_MIN_EXPONENT = -133
_FRACTION_BITS = 7
MAX_FINITE = float.fromhex("0x1.fep127")


def round_to_bfloat16(x: float) -> float:
    """``x`` rounded to the nearest bfloat16 value (ties to even), as a Python float."""
    if x != x or x in (math.inf, -math.inf) or x == 0:
        return x
    _, exponent = math.frexp(x)
    quantum = max(exponent - 1 - _FRACTION_BITS, _MIN_EXPONENT)
    # round() gives an int, so a value that rounds to zero takes its sign back with copysign.
    rounded = math.copysign(math.ldexp(round(math.ldexp(x, -quantum)), quantum), x)
    return rounded if abs(rounded) <= MAX_FINITE else math.copysign(math.inf, x)


def bfloat16_bits(x: float) -> int:
    """The uint16 bit pattern of ``x`` rounded to bfloat16 (a NaN becomes a quiet NaN of its sign)."""
    if x != x:
        return 0xFFC0 if math.copysign(1.0, x) < 0 else 0x7FC0
    return struct.unpack("=I", struct.pack("=f", round_to_bfloat16(x)))[0] >> 16


def bfloat16_value(bits: int) -> float:
    """The value of a bfloat16 bit pattern."""
    return struct.unpack("=f", struct.pack("=I", (bits & 0xFFFF) << 16))[0]


def to_bfloat16_bits(array) -> np.ndarray:
    """A uint16 array of the bfloat16 bit patterns of ``array``'s values, each rounded to nearest even.

    >>> to_bfloat16_bits(np.array([1.0, 1.00390625, 1.01171875, -np.inf], dtype=np.float32))
    array([16256, 16256, 16258, 65408], dtype=uint16)
    """
    shape = np.shape(array)
    with np.errstate(invalid="ignore"):  # signalling NaNs widen quietly
        values = np.atleast_1d(np.asarray(array, dtype=np.float64))
    mantissa, exponent = np.frexp(values)
    quantum = np.maximum(exponent - 1 - _FRACTION_BITS, _MIN_EXPONENT)
    with np.errstate(over="ignore", invalid="ignore"):
        rounded = np.where(
            np.isfinite(values), np.ldexp(np.round(np.ldexp(values, -quantum)), quantum), values
        )
        as_float32 = rounded.astype(np.float32)
    bits = (as_float32.view(np.uint32) >> 16).astype(np.uint16)
    nan = np.isnan(values)
    bits[nan] = np.where(np.signbit(values[nan]), 0xFFC0, 0x7FC0)
    return bits.reshape(shape)


def from_bfloat16_bits(bits) -> np.ndarray:
    """The float32 values of an array of bfloat16 bit patterns (exact: bfloat16 widens to float32)."""
    bits = np.asarray(bits)
    if bits.dtype != np.uint16:
        raise TypeError(f"bfloat16 bit patterns must be a uint16 array, got {bits.dtype}")
    return (bits.astype(np.uint32) << 16).view(np.float32)


def is_ml_dtypes_bfloat16(array) -> bool:
    """Whether ``array`` is an ``ml_dtypes.bfloat16`` array (recognised without importing ml_dtypes)."""
    return isinstance(array, np.ndarray) and array.dtype.name == "bfloat16" and array.dtype.itemsize == 2


def bfloat16_argument(array: np.ndarray) -> tuple[np.ndarray, Callable[[], None] | None]:
    """The uint16 bit array a kernel reads for a bfloat16 parameter, and how to copy results back.

    ``uint16`` arrays (bit patterns) and ``ml_dtypes.bfloat16`` arrays are used in place
    (no copy-back). A float32 array is rounded into a fresh bit array; the returned
    function writes the bit array's values back into it, widened exactly. Any other
    dtype is an error that says what to pass.
    """
    if array.dtype == np.uint16:
        return array, None
    if is_ml_dtypes_bfloat16(array):
        return array.view(np.uint16), None
    if array.dtype == np.float32:
        bits = to_bfloat16_bits(array)

        def write_back() -> None:
            array[...] = from_bfloat16_bits(bits)

        return bits, write_back
    raise TypeError(
        f"a bfloat16 buffer takes a float32 array (rounded to bfloat16 on the way in), a uint16 array "
        f"of bfloat16 bit patterns, or an ml_dtypes.bfloat16 array; got {array.dtype}"
    )


# Every bit pattern's value, for the executor's loads (signalling NaNs widen quietly).
with np.errstate(invalid="ignore"):
    BFLOAT16_VALUES = from_bfloat16_bits(np.arange(65536, dtype=np.uint16)).astype(np.float64).tolist()
