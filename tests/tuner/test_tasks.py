"""Many workloads in one run: the task file, the gradient-based scheduler, and `tir tune tasks.toml`."""

from __future__ import annotations

import json
import math

import pytest

from tuner import Database, workload_key, workloads
from tuner.cli import load_script, main
from tuner.tasks import GradientTaskScheduler, TaskFileError, load_task_file

TASKS = {
    "target": "c",
    "trials": 12,
    "tasks": [
        {"workload": "matmul", "shape": "32,32,32", "weight": 2},
        {"workload": "softmax", "shape": "16,64"},
        {"script": "kernels.py"},
    ],
}
SCRIPT = """
from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i in range(64):
        with T.block("B"):
            vi = T.axis.spatial(64, i)
            B[vi] = A[vi] * T.float32(2)
"""


def test_every_task_gets_a_round_first_then_the_largest_expected_gain():
    scheduler = GradientTaskScheduler([1.0, 1.0, 4.0])
    order = []
    for _ in range(3):
        task = scheduler.next()
        order.append(task)
        scheduler.record(task, 1e-3)
    assert order == [0, 1, 2]
    assert scheduler.next() == 2  # equal latencies: the weight decides
    scheduler.record(0, 1e-4)  # task 0 is ten times faster now: less is left to gain there
    assert scheduler.gain(0) < scheduler.gain(1)


def test_a_task_falling_fast_wins_over_a_flat_one_of_the_same_weight():
    scheduler = GradientTaskScheduler([1.0, 1.0], window=2)
    for best in (8e-3, 4e-3, 2e-3):
        scheduler.record(0, best)
    for best in (3e-3, 3e-3, 3e-3):
        scheduler.record(1, best)
    assert scheduler.next() == 0


def test_tasks_that_never_work_or_are_used_up_stop_getting_rounds():
    scheduler = GradientTaskScheduler([1.0, 1.0])
    scheduler.record(0, None)
    scheduler.record(1, 1e-3)
    assert scheduler.next() == 0  # one more chance
    scheduler.record(0, None)
    assert scheduler.gain(0) == -math.inf and scheduler.next() == 1
    scheduler.retire(1)
    scheduler.retire(0)
    assert scheduler.next() is None


def test_tir_tune_a_task_file_spends_the_total_and_shows_each_task(tmp_path, capsys):
    (tmp_path / "kernels.py").write_text(SCRIPT)
    (tmp_path / "tasks.json").write_text(json.dumps(TASKS))
    db = tmp_path / "t.db"
    assert main(["tune", str(tmp_path / "tasks.json"), "--batch", "2", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    for name in ("matmul[32,32,32]", "softmax[16,64]", "kernels.main", "share"):
        assert name in out
    specs = load_task_file(tmp_path / "tasks.json", load_script).tasks
    with Database(db) as database:
        counts = [database.count(workload_key(spec.mod)) for spec in specs]
    assert sum(counts) == 12 and all(count >= 2 for count in counts)
    for spec, count in zip(specs, counts):  # the table's trials column is what was recorded
        assert f"{spec.name}" in out and f" {count} " in out.split(spec.name, 1)[1].splitlines()[0]


def test_toml_task_file_and_trials_override(tmp_path, capsys):
    (tmp_path / "tasks.toml").write_text(
        'trials = 100\n[[tasks]]\nworkload = "matmul"\nshape = "16,16,16"\n'
        '[[tasks]]\nworkload = "reduction_sum"\nshape = "16,32"\n'
    )
    db = tmp_path / "t.db"
    assert main(["tune", str(tmp_path / "tasks.toml"), "--trials", "4", "--batch", "2", "--db", str(db)]) == 0
    capsys.readouterr()
    with Database(db) as database:
        assert sum(database.count(w.key) for w in database.workloads()) == 4
    assert workloads.make("matmul", "16,16,16") is not None


@pytest.mark.parametrize(
    "text, message",
    [
        ("{}", "lists no tasks"),
        ('{"tasks": [{"workload": "matmul", "script": "x.py"}]}', "task 1: give either"),
        ('{"tasks": [{"workload": "matmull"}]}', "task 1: unknown workload"),
        ('{"tasks": [{"workload": "matmul", "weight": 0}]}', "weight must be a positive number"),
        ('{"trials": "many", "tasks": [{"workload": "matmul"}]}', "trials must be a whole number"),
        ("{tasks", "is not valid JSON"),
    ],
)
def test_bad_task_files_say_which_task_and_field(tmp_path, text, message):
    (tmp_path / "tasks.json").write_text(text)
    with pytest.raises(TaskFileError, match=message):
        load_task_file(tmp_path / "tasks.json", load_script)
