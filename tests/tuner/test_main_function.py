"""One main-function rule: schedule, measure and tune all work on "main" when it is not the first function."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import tir
from codegen import build
from schedule import Schedule
from tir import IRModule
from tuner import Database, apply_best, tune, workload_key, workloads
from tuner.cli import main as cli_main
from tuner.measure import Candidate, MeasureError, Measurer


def _named(mod: IRModule, name: str) -> tir.PrimFunc:
    return dataclasses.replace(mod["main"], name=name)


@pytest.fixture(scope="module")
def main_second() -> IRModule:
    """A module whose first function is a row sum and whose second, "main", is a 32^3 matmul."""
    helper = _named(workloads.make("reduction_sum", "48,40"), "row_sum")
    return IRModule({"row_sum": helper, "main": workloads.make("matmul", "32,32,32")["main"]})


def _random_matmul(rng) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a = rng.random((32, 32), dtype=np.float32)
    b = rng.random((32, 32), dtype=np.float32)
    return a, b, np.full((32, 32), np.nan, dtype=np.float32)


def test_the_rule_names_main_else_the_only_function(main_second):
    assert main_second.main_name() == "main"
    assert main_second.main_function() is main_second["main"]
    only = IRModule({"row_sum": main_second["row_sum"]})
    assert only.main_name() == "row_sum"
    assert tir.flop_count(main_second) == tir.flop_count(main_second["main"])


def test_schedule_works_on_main_when_it_is_not_first(main_second):
    sch = Schedule(main_second)
    loops = sch.get_loops(sch.get_block("C"))
    assert [int(sch.get(loop).extent.value) for loop in loops] == [32, 32, 32]
    sch.split(loops[0], [None, 8])
    assert sch.mod["row_sum"] is main_second["row_sum"]
    a, b, c = _random_matmul(np.random.default_rng(0))
    build(sch.mod, "c")["main"](a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4)


def test_measure_and_tune_agree_on_main(main_second, tmp_path):
    with Measurer(main_second, "c", workers=1) as measurer:
        sch = Schedule(main_second)
        sch.split(sch.get_loops(sch.get_block("C"))[1], [None, 4])
        (result,) = measurer.measure([Candidate(sch.trace.as_json(), sch.mod)])
    assert result.status == "ok", result.error

    db = tmp_path / "main.db"
    tuned = tune(main_second, "c", trials=2, db=db, batch_size=2, workers=1, progress=False)
    assert tuned.workload == "main"
    assert tuned.flops == tir.flop_count(main_second["main"]) == 2 * 32**3
    assert tuned.workload_key == workload_key(main_second) == workload_key(main_second["main"])
    with Database(db) as database:
        records = database.records(tuned.workload_key, "c")
    assert len(records) == 2 and all(r.status == "ok" for r in records)
    best = apply_best(main_second, "c", db)
    a, b, c = _random_matmul(np.random.default_rng(1))
    build(best.mod, "c")["main"](a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4)


def test_several_functions_without_main_are_refused_until_one_is_chosen(main_second, tmp_path, capsys):
    no_main = IRModule({"row_sum": main_second["row_sum"], "mm": _named(main_second, "mm")})
    sch = Schedule(no_main)  # as TVM's: made, but it works on no function until told which
    with pytest.raises(ValueError, match="does not know which function.*functions row_sum, mm and none is"):
        sch.get_block("C")
    sch.work_on("mm")
    assert sch.func_working_on == no_main.get_global_var("mm") and sch.get(sch.get_block("C")).name == "C"
    with pytest.raises(MeasureError, match="none is called 'main'"):
        Measurer(no_main, "c", workers=1)
    with pytest.raises(ValueError, match="none is called 'main'"):
        tune(no_main, "c", trials=1, db=tmp_path / "none.db", progress=False)
    script = tmp_path / "two.py"
    script.write_text(f"from tir import T\n\n{no_main['row_sum'].script()}\n\n{no_main['mm'].script()}\n")
    assert cli_main(["tune", str(script), "--db", str(tmp_path / "cli.db")]) == 2
    assert "choose one with --func NAME" in capsys.readouterr().err
