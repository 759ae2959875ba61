"""The child process of the differential fuzz test: run cases on the executor, C and the Metal simulator.

``python tests/codegen/fuzz_child.py < cases.json > results.json``. Each case is
a small program (TVMScript text), a random schedule (split factor, reorder,
fuse) and a seed for its inputs. The child parses and schedules every case,
runs it through ``tir.interpret``, then builds all cases that build into one
checked module per path (C, Metal simulator), so each compiler runs once, and
runs them. For each
case and path it prints either the outputs or the category of the clean error
it raised: ``out of bounds`` (executor ``OutOfBoundsError``, a BuildError from
the bounds prover, a ``BoundsCheckError``) or ``division by zero``. Any other
exception is reported by class and message, so the parent sees it; a signal
kills the child, which the parent sees too.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402

import tir  # noqa: E402
from codegen import build  # noqa: E402
from codegen.build import generate_source  # noqa: E402
from codegen.errors import BuildError  # noqa: E402
from schedule import Schedule  # noqa: E402
from tir import IRModule  # noqa: E402
from tir.analysis.access_bounds import AccessBoundsError, verify_access_bounds  # noqa: E402

PATHS = (("c", None), ("metal", "sim"))


def category(error: BaseException) -> str:
    """``out of bounds`` / ``division by zero`` for the clean errors, else the class and message."""
    if isinstance(error, (IndexError, AccessBoundsError)):
        return "out of bounds"
    if isinstance(error, ZeroDivisionError):
        return "division by zero"
    return f"{type(error).__name__}: {error}"


def scheduled(case: dict):
    sch = Schedule(tir.parse(case["source"]))
    block = sch.get_block("B")
    loops = sch.get_loops(block)
    if case["fuse"]:
        loops = [sch.fuse(*loops)]
    outer, inner = sch.split(loops[0], [None, case["factor"]])
    if case["reorder"] and len(loops) > 1:
        sch.reorder(inner, loops[1])
    return sch.mod["main"]


def inputs(case: dict, func) -> list[np.ndarray]:
    rng = np.random.default_rng(case["seed"])
    arrays = []
    for buffer in func.buffer_params:
        shape = buffer.static_shape()
        if buffer.name == "I":
            values = rng.integers(0, case["gather_high"], size=shape)
        elif buffer.name == "D":
            values = rng.integers(1, 5, size=shape) * rng.choice([-1, 1], size=shape)
        elif buffer.dtype == "int32":
            values = rng.integers(-50, 50, size=shape)
        else:
            values = rng.uniform(-1, 1, size=shape)
        arrays.append(np.asarray(values, dtype=buffer.dtype))
    for name, flat in case["poke"]:
        target = arrays[[b.name for b in func.buffer_params].index(name)]
        target.reshape(-1)[flat[0] % target.size] = flat[1]
    return arrays


def run_all(cases: list[dict]) -> list[dict]:
    results: list[dict] = [{} for _ in cases]
    funcs, arguments = {}, {}
    for number, case in enumerate(cases):
        func = scheduled(case)
        arguments[number] = inputs(case, func)
        results[number]["executor"] = run(
            lambda *arrays, f=func: tir.interpret(f, *arrays), arguments[number]
        )
        try:  # the prover runs first in every pipeline: a program it rejects fails on every target
            verify_access_bounds(func)
            funcs[f"f{number}"] = func
        except AccessBoundsError as error:
            results[number].update({path_name(*path): category(error) for path in PATHS})
    for path in PATHS:
        for name, outcome in build_and_run(funcs, arguments, *path).items():
            results[int(name[1:])][path_name(*path)] = outcome
    return results


def path_name(target: str, device: str | None) -> str:
    return f"{target}{'-sim' if device else ''}-checked"


def run(call, arrays: list[np.ndarray]) -> list | str:
    """The output's values, or the category of the error ``call`` raised."""
    arrays = [a.copy() for a in arrays]
    try:
        call(*arrays)
    except Exception as error:  # noqa: BLE001 - every error is data for the parent
        return category(error)
    return arrays[-1].tolist()


def build_and_run(funcs: dict, arguments: dict, target: str, device: str | None) -> dict[str, list | str]:
    """One checked module for all ``funcs`` (the per-function builds find the culprit if it fails)."""
    if not funcs:
        return {}
    try:
        module = build(IRModule(funcs), target, device=device, check_bounds=True)
    except BuildError:
        outcomes = {}
        for name, func in funcs.items():
            try:
                generate_source(func, target, check_bounds=True)
            except Exception as error:  # noqa: BLE001
                outcomes[name] = category(error)
        rest = {name: func for name, func in funcs.items() if name not in outcomes}
        return outcomes | build_and_run(rest, arguments, target, device)
    return {name: run(module[name], arguments[int(name[1:])]) for name in funcs}


if __name__ == "__main__":
    json.dump(run_all(json.load(sys.stdin)), sys.stdout)
