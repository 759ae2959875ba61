"""Scalar arguments: one conversion to the parameter's declared dtype, used by every runtime.

A PrimFunc's scalar parameter (``alpha: T.float32``) is passed by value: a C
argument (codegen/c/runtime.py), a CUDA kernel argument (CuPy), bytes given
to ``setBytes:length:atIndex:`` (Metal) or the value behind a pointer (the
Metal host simulator). Each of them gets exactly ``dtype.itemsize`` bytes of
the declared type, so the value the user passes (a Python ``int``, ``float``
or ``bool``, a numpy scalar of any width, a 0-d array) is converted here, once,
and a value that cannot be represented is an error rather than silently
wrapped or reinterpreted: ``2**40`` for an ``int32``, ``1.5`` for any integer
type, ``1e39`` for a ``float32``.

    >>> scalar_argument("float32", np.float64(1.5), "scale: argument alpha")
    np.float32(1.5)
    >>> scalar_argument("int8", 300, "scale: argument n")
    Traceback (most recent call last):
    ...
    ValueError: scale: argument n is an int8 scalar, but 300 is outside its range [-128, 127]
"""

from __future__ import annotations

import math

import numpy as np

_ACCEPTED = "a Python int, float or bool, a numpy scalar or a 0-d array"


def scalar_argument(dtype: str, value: object, where: str) -> np.generic:
    """``value`` as a numpy scalar of ``dtype`` ("float32", "int32", "bool", ...); ``where`` names it.

    Raises TypeError for a value of the wrong kind (a float or a bool for an
    integer parameter, anything that is not a number) and ValueError for one
    out of the dtype's range.
    """
    target = np.dtype("bool" if dtype == "bool" else dtype)
    number = _unwrap(value, dtype, where)
    kind = _kind(number)
    if target.kind == "b":
        if kind != "b":
            raise TypeError(f"{where} is a bool scalar; got {_describe(number)}; pass True or False")
        return np.bool_(number)
    if kind == "b":
        raise TypeError(
            f"{where} is {_a(dtype)} scalar; got the bool {number!r}; "
            f"pass {int(number)} if you meant the number"
        )
    if target.kind in "iu":
        return _integer(target, dtype, number, kind, where)
    return _floating(target, dtype, number, where)


def _unwrap(value: object, dtype: str, where: str) -> object:
    """The Python or numpy number inside ``value`` (a 0-d array gives its element)."""
    if isinstance(value, np.ndarray):
        if value.shape != ():
            raise TypeError(
                f"{where} is {_a(dtype)} scalar; got an array of shape {value.shape}; pass {_ACCEPTED}"
            )
        value = value[()]
    if isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating)):
        return value
    raise TypeError(f"{where} is {_a(dtype)} scalar; got {_describe(value)}; pass {_ACCEPTED}")


def _kind(number: object) -> str:
    if isinstance(number, (bool, np.bool_)):
        return "b"
    if isinstance(number, (int, np.integer)):
        return "i"
    return "f"


def _integer(target: np.dtype, dtype: str, number: object, kind: str, where: str) -> np.generic:
    if kind == "f":
        raise TypeError(
            f"{where} is {_a(dtype)} scalar; got the float {float(number)!r}; "
            "pass an int (round or truncate it yourself, e.g. int(x))"
        )
    info = np.iinfo(target)
    if not info.min <= int(number) <= info.max:
        raise ValueError(
            f"{where} is {_a(dtype)} scalar, but {int(number)} is outside its range [{info.min}, {info.max}]"
        )
    return target.type(int(number))


def _floating(target: np.dtype, dtype: str, number: object, where: str) -> np.generic:
    try:
        with np.errstate(over="ignore"):
            converted = target.type(number)
    except OverflowError:  # a Python int beyond any float
        converted = target.type(math.inf)
    if math.isinf(converted) and not (isinstance(number, (float, np.floating)) and math.isinf(number)):
        limit = np.finfo(target).max
        raise ValueError(
            f"{where} is {_a(dtype)} scalar, but {number!r} is beyond "
            f"its largest finite value {float(limit):g}"
        )
    return converted


def _describe(value: object) -> str:
    return f"{type(value).__name__} {value!r}" if isinstance(value, (str, bytes)) else type(value).__name__


def _a(dtype: str) -> str:
    return f"an {dtype}" if dtype.startswith("int") else f"a {dtype}"
