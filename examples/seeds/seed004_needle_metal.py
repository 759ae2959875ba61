"""Seed 004 (a Metal backend for Needle): every array operator as a scheduled program, on Metal and CUDA.

The seed hand-writes one Metal kernel per NDArray operator (``EwiseTanhKernel``
and the rest). Here each operator is a TVMScript program with a GPU schedule
(examples/seeds/needle_ops.py); this script builds each one for Metal (the host
simulator here, the GPU on a Mac), for CUDA where a GPU and CuPy are present,
checks it against numpy on random inputs, including a broadcast operand and
strided views, and prints the Metal kernel for tanh next to the seed's.

    python examples/seeds/seed004_needle_metal.py          # sizes of a small layer
    python examples/seeds/seed004_needle_metal.py --size 8 # what the test suite runs
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from codegen import build  # noqa: E402
from codegen.errors import RuntimeUnavailableError  # noqa: E402
from examples.seeds.needle_ops import BINARY, OPERATORS, UNARY, Operator, random_arguments  # noqa: E402


def operators(size: int) -> list[Operator]:
    """Every Needle operator at sizes derived from ``size`` (rows of a ``size`` x ``4 * size`` matrix)."""
    rows, cols = size, 4 * size
    ops = [OPERATORS[f"ewise_{op}"]((rows, cols)) for op in BINARY]
    ops += [OPERATORS[f"scalar_{op}"]((rows, cols)) for op in BINARY]
    ops += [OPERATORS[f"ewise_{op}"]((rows, cols)) for op in UNARY]
    ops += [OPERATORS["ewise_add"]((rows, cols), (cols,))]  # a bias row broadcast over rows
    ops += [OPERATORS["reduce_sum"](rows, cols), OPERATORS["reduce_max"](rows, cols)]
    ops += [OPERATORS["matmul"](rows, cols, rows)]
    ops += [OPERATORS["compact"](rows * cols, (cols, rows), (1, cols), 0)]  # a transposed view
    ops += [OPERATORS["ewise_setitem"](rows * cols, (rows, cols // 2), (cols, 2), 0)]  # every other column
    ops += [OPERATORS["scalar_setitem"](rows * cols, (rows, 1), (cols, 1), 0)]  # the first column
    return ops


def run(op: Operator, rng: np.random.Generator) -> list[str]:
    """Run ``op`` wherever it can run here; returns where it matched numpy."""
    ran = []
    for target, device in (("metal", "sim"), ("cuda", None), ("metal", None)):
        arguments = random_arguments(op, rng)
        expected = op.reference(*arguments)
        rt = build(op.scheduled(), target, device=device) if device else build(op.scheduled(), target)
        try:
            rt["main"](*arguments)
        except RuntimeUnavailableError:
            continue
        # Metal GPUs compile with fast math: transcendental functions lose a few more bits there.
        rtol = 1e-3 if target == "metal" and device is None else 1e-5
        np.testing.assert_allclose(arguments[-1], expected, rtol=rtol, atol=1e-5)
        ran.append(f"{target} simulator" if device else target)
    return ran


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=64, help="rows; columns are 4x as many")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    for op in operators(args.size):
        shapes = " ".join(str(tuple(int(d.value) for d in b.shape)) for b in op.program["main"].buffer_params)
        print(f"{op.name:16s} {shapes:40s} matches numpy on {', '.join(run(op, rng))}")
    tanh = OPERATORS["ewise_tanh"]((args.size, 4 * args.size))
    print(build(tanh.scheduled(), "metal", device="sim").get_source())


if __name__ == "__main__":
    main()
