"""What a new user meets first (issue 12), each through a real `tir` subprocess where it is the CLI.

1. literal output: `tir db best` pastes back into Python and replays; `B[vi]` in a quoted line survives;
2. a missing runtime is one line with the fix, exit 2, and no file left behind;
3. `--trials` is the total: a rerun resumes, a finished run says so and prints the table;
4. a parse error in a decorated script shows the user's line and caret without parser frames;
5. (timing: tests/codegen/test_timing_export_dlpack.py);
6. help on every option, `db list` within 100 columns when piped, a closed pipe ends quietly.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys

import pytest

import tir
from codegen.timing import significant
from schedule import Schedule, Trace
from schedule.errors import NotFoundError
from tuner import Database, workload_key, workloads
from tuner.cli import PIPED_WIDTH, _parser

from .test_cli import REPO
from .test_cli import tir as tir_command

ENV = {**os.environ, "PYTHONPATH": str(REPO)}


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    """A database holding 3 trials of matmul[32,32,32] on C."""
    folder = tmp_path_factory.mktemp("first_use")
    done = tir_command("tune", "matmul", "--shape", "32,32,32", "--trials", "3", "--db", "t.db", cwd=folder)
    assert done.returncode == 0, done.stderr
    assert "matmul[32,32,32]" in done.stdout  # the brackets are data, not markup
    return folder


# ---------------------------------------------------------------- 1. literal output


def test_db_best_prints_python_that_pastes_back_and_replays(tuned):
    done = tir_command("db", "best", "--db", "t.db", cwd=tuned)
    assert done.returncode == 0, done.stderr
    assert "factors=[" in done.stdout and "factors=," not in done.stdout
    assert "record 1 of" not in done.stdout and "measured 20" in done.stdout
    mod = workloads.make("matmul", "32,32,32")
    pasted = Schedule(mod)
    exec(compile(done.stdout, "<tir db best>", "exec"), {"sch": pasted})
    with Database(tuned / "t.db") as database:
        (best,) = database.best(workload_key(mod), "c", None, k=1)
    replayed = Schedule(mod)
    Trace.apply_json_to_schedule(best.trace, replayed)
    tir.assert_structural_equal(pasted.mod, replayed.mod)


BAD_SCRIPT = """from tir import T

@T.prim_func
def scale(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vj] * T.float32(2)
"""


def test_parse_error_in_tir_show_keeps_brackets_and_says_error_once(tmp_path):
    (tmp_path / "bad.py").write_text(BAD_SCRIPT)
    done = tir_command("show", "bad.py", cwd=tmp_path)
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert lines[0] == "bad.py:8:23: error: name 'vj' is not defined"
    assert lines[1] == "    B[vi] = A[vj] * T.float32(2)"
    assert lines[2] == "              ^^"  # under vj
    assert lines[3] == "hint: did you mean vi?"
    assert done.stderr.count("error:") == 1


# ---------------------------------------------------------------- 2. missing runtime


@pytest.mark.parametrize(
    "target, fix, missing",
    [
        ("cuda", "pip install 'tensorir-py[cuda]'", importlib.util.find_spec("cupy") is None),
        ("metal", "Metal needs macOS", sys.platform != "darwin"),
    ],
)
def test_missing_runtime_is_one_line_with_the_fix_and_leaves_no_file(tmp_path, target, fix, missing):
    if not missing:
        pytest.skip(f"the {target} runtime is installed here")
    done = tir_command("tune", "matmul", "--target", target, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("error: ") and fix in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert list(tmp_path.iterdir()) == []


def test_tune_api_checks_the_runtime_before_creating_the_database(tmp_path):
    from codegen.errors import RuntimeUnavailableError
    from tuner import tune

    if importlib.util.find_spec("cupy") is not None:
        pytest.skip("CuPy is installed here")
    with pytest.raises(RuntimeUnavailableError, match="tensorir-py\\[cuda\\]"):
        tune(workloads.make("matmul", "16,16,16"), "cuda", 2, tmp_path / "x.db", progress=False)
    assert not (tmp_path / "x.db").exists()


# ---------------------------------------------------------------- 3. resume


def test_trials_are_the_total_so_a_rerun_resumes_and_a_finished_run_says_so(tuned, tmp_path):
    (tmp_path / "t.db").write_bytes((tuned / "t.db").read_bytes())
    args = ("tune", "matmul", "--shape", "32,32,32", "--db", "t.db")
    with Database(tmp_path / "t.db") as database:
        best = database.best(workload_key(workloads.make("matmul", "32,32,32")), "c", None, k=1)[0]

    resumed = tir_command(*args, "--trials", "5", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming: 3 of 5 trials already measured (best " in resumed.stderr
    assert f"(best {significant(best.gflops)} GFLOPS)" in resumed.stderr
    with Database(tmp_path / "t.db") as database:
        assert database.count() == 5
    finished = tir_command(*args, "--trials", "5", cwd=tmp_path)
    assert finished.returncode == 0, finished.stderr
    assert "all 5 trials already measured" in finished.stderr
    assert "best GFLOPS" in finished.stdout and "matmul[32,32,32]" in finished.stdout
    with Database(tmp_path / "t.db") as database:
        assert database.count() == 5


# ---------------------------------------------------------------- 4. parse errors of decorated scripts


def test_decorated_parse_error_shows_the_users_line_without_parser_frames(tmp_path):
    script = tmp_path / "kernel.py"
    script.write_text(BAD_SCRIPT)
    done = subprocess.run([sys.executable, str(script)], env=ENV, capture_output=True, text=True)
    assert done.returncode == 1
    err = done.stderr
    assert f'File "{script}", line 8' in err and "B[vi] = A[vj] * T.float32(2)" in err
    assert "ParseError: name 'vj' is not defined" in err and "hint: did you mean vi?" in err
    assert "tir/script/parser.py" not in err and "script_scope.py" not in err
    assert "During handling" not in err and "direct cause" not in err
    assert len(err.splitlines()) < 15, err
    debug = subprocess.run(
        [sys.executable, str(script)],
        env={**ENV, "TIR_PARSER_TRACEBACK": "1"},
        capture_output=True,
        text=True,
    )
    assert "script_scope.py" in debug.stderr


def test_unknown_t_name_and_store_outside_a_block_get_hints():
    with pytest.raises(tir.ParseError, match="unknown TVMScript name T.serail") as error:
        tir.parse(BAD_SCRIPT.replace("range(8)", "T.serail(8)"))
    assert "did you mean T.serial?" in str(error.value)
    no_blocks = tir.parse(
        """
@T.prim_func
def scale(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        B[i] = A[i] * T.float32(2)
"""
    )
    sch = Schedule(no_blocks)
    before = sch.mod
    with pytest.raises(NotFoundError, match=r"B is written outside any T\.block .*`with T\.block\(\"B\"\):`"):
        sch.get_block("B")
    assert sch.mod is before


# ---------------------------------------------------------------- 6. help, width, closed pipe


def test_every_option_has_help_text():
    parser = _parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    missing = [
        f"tir {name} {action.dest}"
        for name, sub in subparsers.choices.items()
        for action in sub._actions
        if not isinstance(action, argparse._HelpAction) and not action.help
    ]
    assert missing == []


def test_db_list_fits_100_columns_when_piped(tuned):
    done = tir_command("db", "list", "--db", "t.db", cwd=tuned)
    assert done.returncode == 0, done.stderr
    assert "matmul[32,32,32]" in done.stdout
    assert max(len(line) for line in done.stdout.splitlines()) <= PIPED_WIDTH


def test_a_closed_pipe_ends_quietly(tmp_path):
    functions = "".join(
        BAD_SCRIPT.split("\n", 2)[2].replace("scale", f"scale{k}").replace("vj", "vi") for k in range(1000)
    )
    (tmp_path / "many.py").write_text("from tir import T\n" + functions)
    process = subprocess.Popen(
        [sys.executable, "-m", "tuner.cli", "show", "many.py"],
        cwd=tmp_path,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout.readline()  # like `| head -1`: read a line, then close the pipe (the output,
    # ~340 KB, is far more than the pipe and the reader buffer hold, so the writer meets the closed end)
    process.stdout.close()
    assert process.wait(timeout=120) == 141
    assert process.stderr.read() == b""
