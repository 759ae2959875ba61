"""The `tir` command: the quick-start run, the db subcommands, show, and every bad input."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tuner import Database, workloads
from tuner.cli import main

REPO = Path(__file__).resolve().parents[2]


def tir(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "tuner.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def tuned_db(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli")
    done = tir(
        "tune", "matmul", "--shape", "64,64,64", "--trials", "6", "--batch", "3", "--db", "t.db", cwd=folder
    )
    assert done.returncode == 0, done.stderr
    assert "best GFLOPS" in done.stdout and "matmul[64,64,64]" in done.stdout
    return folder


def test_db_list_best_export_import_plot(tuned_db, capsys):
    db = str(tuned_db / "t.db")
    assert main(["db", "list", "--db", db]) == 0
    assert "matmul[64,64,64]" in capsys.readouterr().out
    assert main(["db", "best", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "GFLOPS" in out and "sch.get_block" in out
    exported = tuned_db / "records.jsonl"
    assert main(["db", "export", str(exported), "--db", db]) == 0
    assert main(["db", "import", str(exported), "--db", str(tuned_db / "copy.db")]) == 0
    with Database(tuned_db / "copy.db") as copy, Database(db) as original:
        assert copy.count() == original.count() == 6
    png = tuned_db / "curve.png"
    assert main(["db", "plot", "--db", db, "--out", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


SCRIPT = """
import numpy as np
from tir import T

N = 32

@T.prim_func
def scale(A: T.Buffer((N,), "float32"), B: T.Buffer((N,), "float32")):
    for i in range(N):
        with T.block("B"):
            vi = T.axis.spatial(N, i)
            B[vi] = A[vi] * T.float32(2)

raise SystemExit("this file must never be executed")
"""


def test_show_and_tune_a_script_without_running_it(tmp_path, capsys):
    script = tmp_path / "kernels.py"
    script.write_text(SCRIPT)
    assert main(["show", str(script)]) == 0
    assert "def scale" in capsys.readouterr().out
    assert (
        main(["tune", str(script), "--func", "scale", "--trials", "2", "--db", str(tmp_path / "s.db")]) == 0
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["tune", "matmull"], "did you mean 'matmul'"),
        (["tune", "matmul", "--shape", "64,64"], "matmul takes 3 sizes"),
        (["tune", "matmul", "--target", "vulkan"], "unknown target 'vulkan'"),
        (["tune", "matmul", "--dtype", "int7"], "int7"),
        (["tune", "missing.py"], "no such file"),
        (["db", "list", "--db", "nowhere.db"], "no database at nowhere.db"),
    ],
)
def test_bad_input_is_one_clear_line(tmp_path, monkeypatch, capsys, args, message):
    monkeypatch.chdir(tmp_path)
    assert main(args) == 2
    assert message in capsys.readouterr().err


def test_script_that_does_not_parse_and_missing_function(tmp_path, capsys):
    script = tmp_path / "bad.py"
    script.write_text(SCRIPT.replace("T.axis.spatial(N, i)", "T.axis.spatial(N i)"))
    assert main(["show", str(script)]) == 2
    assert "bad.py" in capsys.readouterr().err
    script.write_text(SCRIPT)
    assert main(["tune", str(script), "--func", "nope", "--db", str(tmp_path / "x.db")]) == 2
    assert "has no function 'nope'" in capsys.readouterr().err


def test_database_that_is_not_ours(tmp_path, capsys):
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("create table t (x)").connection.commit()
    assert main(["tune", "matmul", "--shape", "16,16,16", "--trials", "1", "--db", str(other)]) == 2
    assert "other.db" in capsys.readouterr().err


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL])
def test_interrupted_run_keeps_records_and_resumes(tmp_path, how):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    args = [sys.executable, "-m", "tuner.cli", "tune", "matmul", "--shape", "64,64,64", "--batch", "2"]
    args += ["--trials", "40", "--db", "r.db"]
    process = subprocess.Popen(args, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    key = workloads_key()
    while time.monotonic() < deadline:
        if (tmp_path / "r.db").exists():
            try:
                with Database(tmp_path / "r.db") as database:
                    if database.count(key) >= 2:
                        break
            except Exception:  # noqa: BLE001 - the database may be mid-creation
                pass
        time.sleep(0.2)
    process.send_signal(how)
    process.wait(timeout=60)
    if how == signal.SIGINT:
        assert process.returncode == 130
    with Database(tmp_path / "r.db") as database:
        kept = database.count(key)
    assert kept >= 2
    resumed = subprocess.run(
        [*args[:-4], "--trials", str(kept + 2), "--db", "r.db"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming: {kept} of {kept + 2} trials already measured (best " in resumed.stderr
    with Database(tmp_path / "r.db") as database:
        assert database.count(key) == kept + 2


def workloads_key() -> str:
    from tuner import workload_key

    return workload_key(workloads.make("matmul", "64,64,64"))
