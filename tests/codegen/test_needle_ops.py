"""Seed 004: Needle's array operators as TVMScript programs, scheduled for a GPU, built for Metal and CUDA.

Each case (examples/seeds/needle_ops.py) runs on random inputs in the Metal
host simulator and is compared with numpy; its CUDA source compiles with nvcc
for sm_90 where nvcc exists; ``-m gpu`` runs it on an NVIDIA GPU and ``-m
metal`` on a Mac. Cases include numpy broadcasting (missing and size-1
dimensions), stride-0 (broadcast) and strided views for compact/setitem, and
shapes that are not multiples of the 128-thread blocks. The Metal sources of
tanh, power and the two reductions are golden files (``--update-golden``).

Tolerances, relative to numpy in float32 (``rtol``):

- exact in IEEE arithmetic (add, mul, maximum, eq, ge, compact, setitem): 0;
- div: 0 on C, CUDA and the simulator; Metal's fast math (the default of
  ``MTLCompileOptions``) does not promise a correctly rounded divide;
- log, exp, tanh, power: a few ulps (the C library, CUDA's and numpy's
  implementations differ in the last bits): 1e-5 here;
- on a real Metal GPU, fast math lets log, exp, pow and tanh lose more (the
  error bound of ``exp`` grows with ``|x|``, tanh is computed from exp): 1e-3
  there, and absolute 1e-5 near zero. The simulator runs g++'s libm, so it
  cannot show Metal's precision; only ``-m metal`` on a Mac can.
- sums (reduce_sum, matmul) add in another order than numpy: 1e-5; max: 0.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from codegen import RuntimeUnavailableError, build
from codegen.build import generate_source
from examples.seeds.needle_ops import (
    Operator,
    compact,
    ewise,
    ewise_setitem,
    matmul,
    random_arguments,
    scalar,
    scalar_setitem,
    unary,
)
from examples.seeds.needle_ops import reduce as reduce_op
from tests.codegen.test_golden_sources import assert_matches_golden

TRANSCENDENTAL = ("log", "exp", "tanh", "power")

CASES: dict[str, Operator] = {
    **{f"ewise_{op}": ewise(op, (3, 70)) for op in ("add", "mul", "div", "power", "maximum", "eq", "ge")},
    **{f"scalar_{op}": scalar(op, (5, 29)) for op in ("add", "mul", "div", "power", "maximum", "eq", "ge")},
    **{f"ewise_{op}": unary(op, (4, 3, 33)) for op in ("log", "exp", "tanh")},
    "ewise_add_broadcast_row": ewise("add", (6, 40), (40,)),
    "ewise_mul_broadcast_column": ewise("mul", (6, 40), (6, 1)),
    "ewise_maximum_broadcast_middle": ewise("maximum", (2, 5, 7), (2, 1, 7)),
    "reduce_sum": reduce_op("sum", 150, 33),
    "reduce_max": reduce_op("max", 37, 19),
    "matmul": matmul(48, 32, 64),
    "compact_transpose": compact(60, (5, 12), (1, 5), 0),
    "compact_strided_slice": compact(200, (3, 4), (40, 3), 7),
    "compact_broadcast": compact(9, (4, 9), (0, 1), 0),
    "ewise_setitem_strided": ewise_setitem(200, (3, 4), (40, 3), 7),
    "scalar_setitem_strided": scalar_setitem(100, (4, 5), (20, 2), 3),
}
GOLDEN_CASES = {
    "needle_tanh": CASES["ewise_tanh"],
    "needle_power": CASES["ewise_power"],
    "needle_scalar_power": CASES["scalar_power"],
    "needle_reduce_sum": CASES["reduce_sum"],
    "needle_reduce_max": CASES["reduce_max"],
}


def tolerance(name: str, target: str) -> dict[str, float]:
    kind = name.split("_")[1] if name.startswith(("ewise", "scalar", "reduce")) else name
    if target == "metal":  # a real Metal GPU, fast math
        if kind in TRANSCENDENTAL:
            return {"rtol": 1e-3, "atol": 1e-5}
        if kind == "div":
            return {"rtol": 1e-6, "atol": 0}
    if kind in (*TRANSCENDENTAL, "sum", "matmul"):
        return {"rtol": 1e-5, "atol": 1e-6}
    return {"rtol": 0, "atol": 0}


def check_case(name: str, target: str, device: str | None) -> None:
    op = CASES[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    arguments = random_arguments(op, rng)
    expected = op.reference(*arguments)
    module = build(op.scheduled(), target, device=device) if device else build(op.scheduled(), target)
    module["main"](*arguments)
    np.testing.assert_allclose(
        arguments[-1], expected, **tolerance(name, target if device is None else "sim")
    )


@pytest.mark.parametrize("name", sorted(CASES))
def test_needle_operator_in_the_metal_simulator(name):
    check_case(name, "metal", "sim")


@pytest.mark.parametrize("name", sorted(CASES))
def test_needle_operator_cuda_source_compiles_with_nvcc(name):
    nvcc = pytest.importorskip("codegen.cuda.nvcc")
    if not nvcc.nvcc_available():
        pytest.skip("nvcc is not installed")
    source, _ = generate_source(CASES[name].scheduled(), "cuda")
    assert nvcc.compile_with_nvcc(source, "sm_90")


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(CASES))
def test_needle_operator_on_cuda(name):
    try:
        check_case(name, "cuda", None)
    except RuntimeUnavailableError as error:
        pytest.skip(f"no CUDA runtime here: {error}")


@pytest.mark.metal
@pytest.mark.parametrize("name", sorted(CASES))
def test_needle_operator_on_metal(name):
    try:
        check_case(name, "metal", None)
    except RuntimeUnavailableError as error:
        pytest.skip(f"no Metal device here: {error}")


@pytest.mark.parametrize("name", sorted(GOLDEN_CASES))
def test_needle_metal_golden_source(name, request):
    source, _ = generate_source(GOLDEN_CASES[name].scheduled(), "metal")
    assert_matches_golden(source, f"{name}.metal", request)


def test_broadcast_operand_is_read_with_a_zero_index():
    source, _ = generate_source(CASES["ewise_mul_broadcast_column"].scheduled(), "metal")
    assert "B[" in source and "A[" in source
    # B is (6, 1): every output of a row reads the same B element, B[row]
    assert "B[(blockIdx_x * 128 + threadIdx_x) / 40]" in source


def test_shape_that_does_not_broadcast_is_rejected():
    with pytest.raises(ValueError, match=r"shape \(3,\) does not broadcast to \(6, 40\)"):
        ewise("add", (6, 40), (3,))
