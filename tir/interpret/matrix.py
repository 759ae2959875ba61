"""The executor's matrix operations (tir/matrix_ops.py), with serial semantics.

The generated code calls ``matrix_op(kind, *operands)`` where a tile operand is a
``Tile`` (flat storage, first element, row stride, rows, cols, dtype) and a fill
value is a number. Fragments are ordinary buffers here: the executor runs one
thread, so a simdgroup's collective load is simply a copy of the tile. Products
accumulate in Python floats (double) and round once when stored, as a matrix unit
with a wide accumulator does.
"""

from __future__ import annotations

from typing import NamedTuple

from ..bfloat16 import BFLOAT16_VALUES, bfloat16_bits
from .runtime import F16_VALUES, f16_bits

# 16-bit floats live as their uint16 bits: how to read and write them.
_READ = {"float16": F16_VALUES.__getitem__, "bfloat16": BFLOAT16_VALUES.__getitem__}
_WRITE = {"float16": f16_bits, "bfloat16": bfloat16_bits}


class Tile(NamedTuple):
    storage: object
    start: int
    stride: int
    rows: int
    cols: int
    dtype: str


def _read(tile: Tile) -> list[list[float]]:
    convert = _READ.get(tile.dtype, float)
    return [
        [convert(tile.storage[tile.start + r * tile.stride + c]) for c in range(tile.cols)]
        for r in range(tile.rows)
    ]


def _write(tile: Tile, values: list[list[float]]) -> None:
    convert = _WRITE.get(tile.dtype, float)
    for r in range(tile.rows):
        for c in range(tile.cols):
            tile.storage[tile.start + r * tile.stride + c] = convert(values[r][c])


def _product(a: list[list[float]], b: list[list[float]], c: list[list[float]]) -> list[list[float]]:
    inner = range(len(b))
    return [
        [c[i][j] + sum(a[i][k] * b[k][j] for k in inner) for j in range(len(b[0]))] for i in range(len(a))
    ]


def matrix_op(kind: str, *operands) -> None:
    """Run one matrix operation of ``kind`` ("load", "store", "fill", "mma")."""
    if kind == "load":
        _write(operands[0], _read(operands[1]))
    elif kind == "store":
        _write(operands[1], _read(operands[0]))
    elif kind == "fill":
        frag, value = operands
        _write(frag, [[value] * frag.cols for _ in range(frag.rows)])
    else:
        d, a, b, c = operands
        _write(d, _product(_read(a), _read(b), _read(c)))
