"""Checks every schedule test uses: trace round trips, numeric equality, unchanged-on-error.

sch = Schedule(matmul)
... primitives ...
tir.assert_structural_equal(sch.mod["main"], matmul_split_expected)
verify_trace_roundtrip(sch, matmul)
assert_same_numbers(matmul, sch.mod["main"])
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import tir
from schedule import Schedule, ScheduleError, Trace


def _as_func(obj) -> tir.PrimFunc:
    if isinstance(obj, tir.IRModule):
        return obj.main_function()
    return obj


def verify_trace_roundtrip(sch: Schedule, original) -> None:
    """Replaying the trace from JSON and from its Python text gives the same module."""
    text = json.dumps(sch.trace.as_json())
    replayed = Schedule(original)
    Trace.apply_json_to_schedule(json.loads(text), replayed)
    tir.assert_structural_equal(replayed.mod, sch.mod)
    assert replayed.trace.as_json() == sch.trace.as_json()

    from_python = Schedule(original)
    exec(sch.trace.as_python(), {"sch": from_python})  # test-only: the text is ours
    tir.assert_structural_equal(from_python.mod, sch.mod)


def random_args(func: tir.PrimFunc, seed: int = 0) -> list[np.ndarray]:
    """Random arrays for every buffer parameter (never zeros)."""
    rng = np.random.default_rng(seed)
    arrays = []
    for param in func.params:
        if not isinstance(param, tir.Buffer):
            raise TypeError("random_args supports buffer parameters only")
        shape = tuple(int(s) for s in param.shape)
        if tir.dtype.is_float(param.dtype):
            arrays.append(np.asarray(rng.random(shape) * 2 - 1 + 0.1).astype(param.dtype))  # 0-d too
        elif param.dtype == "bool":
            arrays.append(rng.random(shape) < 0.5)
        else:
            arrays.append(rng.integers(1, 10, size=shape).astype(param.dtype))
    return arrays


def assert_same_numbers(before, after, seed: int = 0, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """Both functions compute the same outputs on the same random inputs."""
    before, after = _as_func(before), _as_func(after)
    args_before = random_args(before, seed)
    args_after = [a.copy() for a in args_before]
    tir.interpret(before, *args_before)
    tir.interpret(after, *args_after)
    for param, x, y in zip(before.params, args_before, args_after):
        np.testing.assert_allclose(y, x, rtol=rtol, atol=atol, err_msg=f"buffer {param.name}")


def assert_fails_unchanged(sch: Schedule, error_cls: type, phrase: str, primitive, *args, **kwargs):
    """The call raises ``error_cls`` mentioning ``phrase``, rendered, and changes nothing."""
    mod_before = sch.mod
    trace_before = sch.trace.as_json()
    with pytest.raises(error_cls) as info:
        primitive(*args, **kwargs)
    err = info.value
    assert isinstance(err, ScheduleError)
    message = str(err)
    assert phrase in message, message
    assert "ScheduleError in " in message and "@T.prim_func" in message, message
    assert sch.mod is mod_before
    tir.assert_structural_equal(sch.mod, mod_before)
    assert sch.trace.as_json() == trace_before
    return err
