"""Every program of the fixture corpus parses, round-trips, runs, counts FLOPs and is well formed.

One test per property, parametrized over ``tests.fixtures.programs.FIXTURES``
(ids are the fixture names): the decorated function parsed into a PrimFunc
whose signature matches its inputs; printing and parsing back gives a
structurally equal function and a stable text; the executor's results on
random inputs match the numpy reference and every output element was written
(outputs start as garbage) while inputs stay untouched; ``tir.flop_count``
equals the hand count; ``tir.verify_well_formed`` accepts the function.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import tir
from tests.fixtures.fixture import Fixture
from tests.fixtures.programs import FIXTURES, MODULES

# (rtol, atol) by output dtype; the executor computes in double precision and
# rounds on every store, so float32 results differ from the reference only by
# a few roundings of the accumulators.
TOLERANCES = {"float16": (1e-3, 1e-3), "float32": (1e-5, 1e-5), "float64": (1e-12, 1e-12)}


def _params(fixtures: list[Fixture]) -> list:
    return [pytest.param(fixture, id=fixture.name) for fixture in fixtures]


def _rng(fixture: Fixture) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(fixture.name.encode()))


ALL = _params(FIXTURES)
EXECUTABLE = _params([f for f in FIXTURES if f.executable])
WITH_FLOPS = _params([f for f in FIXTURES if f.flops is not None])


def test_fixture_names_are_unique():
    names = [fixture.name for fixture in FIXTURES]
    assert len(names) == len(set(names)) >= 30


@pytest.mark.parametrize("fixture", ALL)
def test_parses_with_signature_of_inputs(fixture: Fixture):
    func = fixture.func
    assert isinstance(func, tir.PrimFunc)
    assert isinstance(func.body, tir.BlockRealize) and func.body.block.name == "root"
    arrays = fixture.inputs(_rng(fixture))
    assert len(arrays) == len(func.params)
    for param, array in zip(func.params, arrays):
        if isinstance(param, tir.Buffer):
            assert param.static_shape() == array.shape, param.name
        else:
            assert isinstance(param, tir.Var) and np.ndim(array) == 0, param.name
        assert param.dtype == str(array.dtype), param.name
        assert np.all(array != 0), f"input {param.name} of {fixture.name} has zeros"
    assert fixture.outputs and all(0 <= i < len(arrays) for i in fixture.outputs)


@pytest.mark.parametrize("fixture", ALL)
def test_print_parse_round_trip(fixture: Fixture):
    text = fixture.func.script()
    reparsed = tir.parse(text)
    tir.assert_structural_equal(reparsed, fixture.func)
    assert reparsed.script() == text


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_round_trip(name: str):
    module = MODULES[name]
    assert isinstance(module, tir.IRModule)
    reparsed = tir.parse(module.script())
    assert isinstance(reparsed, tir.IRModule)
    assert list(reparsed.functions) == list(module.functions)
    tir.assert_structural_equal(reparsed, module)


def test_two_function_module_keeps_both_functions():
    module = MODULES["TwoFunctionModule"]
    assert list(module.functions) == ["add_one", "square"]
    assert module["add_one"].name == "add_one" and module["square"].name == "square"
    assert not tir.structural_equal(module["add_one"], module["square"])


@pytest.mark.parametrize("fixture", EXECUTABLE)
def test_executor_matches_reference(fixture: Fixture):
    arrays = fixture.inputs(_rng(fixture))
    before = [array.copy() for array in arrays]
    tir.interpret(fixture.func, *arrays)
    expected = fixture.reference(*[array.copy() for array in before])
    assert len(expected) == len(fixture.outputs)
    for index, want in zip(fixture.outputs, expected):
        got = arrays[index]
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.all(got != before[index]), f"output {index} of {fixture.name} was not fully written"
        if got.dtype.name in TOLERANCES:
            rtol, atol = TOLERANCES[got.dtype.name]
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(got, want)
    for index, array in enumerate(arrays):
        if index not in fixture.outputs:
            np.testing.assert_array_equal(array, before[index], err_msg=f"input {index} was modified")


@pytest.mark.parametrize("fixture", WITH_FLOPS)
def test_flop_count(fixture: Fixture):
    assert tir.flop_count(fixture.func) == fixture.flops


@pytest.mark.parametrize("fixture", ALL)
def test_well_formed(fixture: Fixture):
    assert tir.verify_well_formed(fixture.func) is not False
