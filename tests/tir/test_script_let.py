"""The older TVMScript spelling of lets (issue 16): ``T.let(x, value, body)`` and ``with T.let(x, value):``.

Printed programs from older TVM releases bind a variable declared with ``x = T.int32()``
this way. Each form must parse to the same IR as today's spelling (``T.Let(body,
where={x: value})``, ``x: T.int32 = value``), print in today's spelling, and compute the
same numbers in the executor.
"""

from __future__ import annotations

import numpy as np
import pytest

import tir
from tir.script.errors import ParseError

LET_STATEMENT_OLD = """
@T.prim_func
def main(A: T.Buffer((6,), "float32")):
    x = T.int32()
    for i in range(6):
        with T.let(x, i * 3):
            A[i] = T.Cast("float32", x) + A[i]
"""

LET_STATEMENT_NEW = """
@T.prim_func
def main(A: T.Buffer((6,), "float32")):
    for i in range(6):
        x: T.int32 = i * 3
        A[i] = T.Cast("float32", x) + A[i]
"""

LET_EXPRESSION_OLD = """
@T.prim_func
def main(A: T.Buffer((6,), "float32")):
    x = T.int32()
    for i in range(6):
        A[i] = T.Cast("float32", T.let(x, i * 3, x * x)) + A[i]
"""

LET_EXPRESSION_NEW = """
@T.prim_func
def main(A: T.Buffer((6,), "float32")):
    for i in range(6):
        A[i] = T.Cast("float32", T.Let(x * x, where={x: i * 3})) + A[i]
"""


@pytest.mark.parametrize(
    "old, new, expected",
    [
        (LET_STATEMENT_OLD, LET_STATEMENT_NEW, lambda i: i * 3),
        (LET_EXPRESSION_OLD, LET_EXPRESSION_NEW, lambda i: (i * 3) ** 2),
    ],
    ids=["statement", "expression"],
)
def test_the_older_let_is_todays_let(old, new, expected):
    func = tir.parse(old)
    tir.assert_structural_equal(func, tir.parse(new))
    tir.assert_structural_equal(tir.parse(func.script()), func)
    start = np.random.default_rng(3).random(6).astype("float32")
    a = start.copy()
    tir.interpret(func, a)
    np.testing.assert_allclose(a, start + expected(np.arange(6)).astype("float32"), rtol=1e-6)


def test_let_of_something_that_is_not_a_variable():
    program = LET_EXPRESSION_OLD.replace("T.let(x, i * 3", "T.let(i + 1, i * 3")
    with pytest.raises(ParseError, match="T.let binds a variable declared before"):
        tir.parse(program)


def test_let_of_a_value_of_another_dtype():
    program = LET_STATEMENT_OLD.replace("T.let(x, i * 3)", "T.let(x, T.float32(1))")
    with pytest.raises(ParseError, match="x is int32 but the value is float32"):
        tir.parse(program)
