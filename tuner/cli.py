"""The `tir` command: tune, inspect the records database, show a script.

    tir tune matmul --shape 512,512,512 --trials 64          # a built-in workload, target c
    tir tune my_kernels.py --func main --target cuda --trials 200 --db runs.db
    tir tune model.toml --trials 300          # many workloads, one budget (tuner/tasks.py)
    tir tune matmul --ray 10.0.0.5:6379       # build and measure on a Ray cluster
    tir db list | best | export FILE | import FILE | plot [--out FILE.png]
    tir show my_kernels.py

Script files are parsed, never executed: the ``@T.prim_func`` / ``@I.ir_module``
definitions are read with Python's ``ast`` and parsed by ``tir.parse``, with
module-level constants (``N = 1024``) as free names. ``--trials`` is the total
for the workload, target and device in the database: Ctrl-C stops a tuning run
with every finished record kept, and the same command again resumes with the
trials that remain. A target whose runtime is missing here is one line on
stderr with the fix (exit status 2), before any file is created.

Everything printed is literal text: the consoles interpret no markup, so a name
such as ``matmul[64,64,64]`` or a source line quoting ``B[vi]`` prints as it is.
Tables fit the terminal, or 100 columns when piped; a closed pipe (``tir show
f.py | head``) ends the command quietly.
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

import tir
from codegen.errors import RuntimeUnavailableError
from codegen.target import Target, TargetError
from codegen.timing import significant
from tir.function import IRModule, PrimFunc

from . import workloads
from .database import Database, DatabaseError
from .measure import MeasureError

PIPED_WIDTH = 100
# No markup and no highlighting: user data (names, source lines, schedules) prints literally.
console = Console(width=None if sys.stdout.isatty() else PIPED_WIDTH, markup=False, highlight=False)
errors = Console(
    stderr=True, width=None if sys.stderr.isatty() else PIPED_WIDTH, markup=False, highlight=False
)


class CommandError(Exception):
    """A user mistake on the command line: printed without a traceback, exit status 2."""


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "run"):
        parser.print_help()
        return 2
    try:
        status = args.run(args) or 0
        sys.stdout.flush()  # a reader that went away fails here, inside the try, not at exit
        return status
    except KeyboardInterrupt:
        errors.print(
            Text.assemble(
                ("interrupted", "yellow"), ": finished records are kept; run the same command to resume"
            ),
            soft_wrap=True,
        )
        return 130
    except tir.ParseError as error:
        errors.print(Text(str(error)), soft_wrap=True)  # already "file:line:col: error: ..." with the caret
        return 2
    except (
        CommandError,
        DatabaseError,
        TargetError,
        workloads.WorkloadError,
        RuntimeUnavailableError,
        MeasureError,
    ) as error:
        errors.print(Text.assemble(("error:", "red"), f" {error}"), soft_wrap=True)
        return 2
    except BrokenPipeError:
        # The reader (head, less) went away: stop quietly, and keep Python's exit flush from failing too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a writer whose pipe closed


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tir", description="Tensor program tuning from the command line.")
    commands = parser.add_subparsers(title="commands")

    tune = commands.add_parser("tune", help="search schedules for a workload and record every measurement")
    known = ", ".join(workloads.WORKLOADS)
    tune.add_argument(
        "workload", help=f"a built-in workload ({known}), a .py script, or a .toml/.json file of tasks"
    )
    tune.add_argument("--shape", help="sizes of a built-in workload, e.g. 512,512,512")
    tune.add_argument(
        "--dtype",
        default="float32",
        help="element type of a built-in workload (default float32; float16, bfloat16)",
    )
    tune.add_argument("--func", default=None, help="function of a script or module to tune (default: main)")
    tune.add_argument("--target", default=None, help="c (default, or the task file's), cuda or metal")
    tune.add_argument(
        "--trials",
        type=int,
        default=None,
        help="total candidates measured for this workload, target and device in the database, "
        "counting earlier runs (default 64; for a task file, its total over all tasks): a rerun "
        "resumes with the rest",
    )
    tune.add_argument("--db", default="tuning.db", help="records database (default tuning.db)")
    tune.add_argument(
        "--seed", type=int, default=0, help="seed of the search and of the random inputs (default 0)"
    )
    tune.add_argument(
        "--batch", type=int, default=None, help="candidates built and measured per round (default 8)"
    )
    tune.add_argument("--random", action="store_true", help="random search of the same space (no cost model)")
    tune.add_argument(
        "--ray",
        nargs="?",
        const="",
        default=None,
        metavar="ADDRESS",
        help="build and measure on a Ray cluster (ADDRESS of its head; none: a Ray instance on this machine)",
    )
    tune.set_defaults(run=_tune)

    db = commands.add_parser("db", help="inspect, share and plot the records database")
    db.add_argument(
        "action",
        choices=["list", "best", "export", "import", "plot"],
        help="list: workloads and best GFLOPS; best: the best schedule as Python; export/import: "
        "JSON lines; plot: best GFLOPS against trials",
    )
    db.add_argument("file", nargs="?", help="JSON-lines file for export/import")
    db.add_argument("--db", default="tuning.db", help="records database (default tuning.db)")
    db.add_argument("--target", default=None, help="only records of this target (c, cuda, metal)")
    db.add_argument("--workload", default=None, help="workload key or name (default: every workload)")
    db.add_argument("--out", default="tuning.png", help="PNG written by plot")
    db.set_defaults(run=_db)

    show = commands.add_parser("show", help="print the TVMScript module of a script file")
    show.add_argument("file", help="a .py file with @T.prim_func or @I.ir_module definitions")
    show.add_argument("--func", default=None, help="print only this function (default: the whole module)")
    show.set_defaults(run=_show)
    return parser


# ---------------------------------------------------------------- tune


def _tune(args) -> int:
    from .search import tune

    if Path(args.workload).suffix in (".toml", ".json"):
        return _tune_tasks(args)
    target = Target.parse(args.target or "c")
    with _runner(args) as runner:
        runner.check(target)  # before anything else: a missing runtime is the error to see
        mod, name, reference = _workload(args)
        result = tune(
            mod,
            target,
            _trials(args, 64),
            args.db,
            seed=args.seed,
            batch_size=args.batch,
            workload_name=name,
            reference=reference,
            guided=not args.random,
            runner=runner,
        )
    _print_results([result], None, args.db)
    return 0


def _tune_tasks(args) -> int:
    from .tasks import TaskFileError, load_task_file, tune_tasks

    try:
        task_file = load_task_file(args.workload, load_script)
    except TaskFileError as error:
        raise CommandError(str(error)) from None
    target = Target.parse(args.target or task_file.target)
    trials = _trials(args, task_file.trials)
    with _runner(args) as runner:
        results = tune_tasks(
            task_file.tasks,
            target,
            trials,
            args.db,
            seed=args.seed,
            batch_size=args.batch,
            runner=runner,
            guided=not args.random,
        )
    _print_results(results, [spec.weight for spec in task_file.tasks], args.db)
    return 0


def _trials(args, default: int) -> int:
    trials = default if args.trials is None else args.trials
    if trials < 1:
        raise CommandError(f"--trials must be at least 1; got {trials}")
    return trials


def _print_results(results: list, weights: list[float] | None, db: str) -> None:
    """One row per workload; a multi-task run adds each one's weight and its share of the trials."""
    table = Table(title=f"tuning results ({results[0].device})")
    columns = ["workload", "FLOP", "best GFLOPS", "latency", "trials", "errors"]
    if weights is not None:
        columns[1:1] = ["weight"]
        columns += ["share"]
    for column in columns:
        table.add_column(column, justify="right" if column != "workload" else "left")
    total = sum(result.trials for result in results) or 1
    for number, result in enumerate(results):
        latency = f"{significant(result.best_seconds * 1e6)} us" if result.best_seconds else "-"
        row = [result.workload, f"{result.flops:,}", significant(result.best_gflops), latency]
        row += [str(result.trials), str(result.errors)]
        if weights is not None:
            row[1:1] = [f"{weights[number]:g}"]
            row += [f"{result.trials / total:.0%}"]
        table.add_row(*row)
    console.print(table)
    if len(results) == 1:
        console.print(f"{results[0].time_split()}; records in {db}", soft_wrap=True)
        return
    seconds = max(result.seconds for result in results)
    model_seconds = max(result.cost_model_seconds for result in results)  # one model, shared
    console.print(
        f"{seconds:.1f} s wall, {model_seconds:.1f} s of it in the cost model loop; records in {db}",
        soft_wrap=True,
    )


def _runner(args):
    """Where candidates are measured: this machine, or the Ray cluster that ``--ray`` names."""
    from .measure.local_runner import LocalRunner

    if args.ray is None:
        return LocalRunner()
    from .measure.ray_runner import RayRunner, RayUnavailableError

    try:
        return RayRunner(args.ray or None)
    except RayUnavailableError as error:
        raise CommandError(str(error)) from None


def _workload(args):
    if args.workload.endswith(".py") or Path(args.workload).exists():
        mod = load_script(Path(args.workload))
        try:
            func = args.func or mod.main_name()
        except ValueError as error:
            raise CommandError(f"{args.workload}: {error}; choose one with --func NAME") from None
        if func not in mod:
            raise CommandError(f"{args.workload} has no function {func!r}; it has {', '.join(mod.functions)}")
        return IRModule.from_func(mod[func]), f"{Path(args.workload).stem}.{func}", None
    mod = workloads.make(args.workload, args.shape, args.dtype)
    shape = ",".join(str(v) for v in workloads.get_workload(args.workload).sizes(args.shape).values())
    return mod, f"{args.workload}[{shape}]", workloads.reference_for(args.workload, args.shape, args.dtype)


def load_script(path: Path) -> IRModule:
    """The prim_funcs and ir_modules of a Python file, parsed without running it."""
    if not path.exists():
        raise CommandError(f"no such file: {path}")
    text = path.read_text()
    try:
        tree = ast.parse(text, filename=str(path))
    except SyntaxError as error:
        raise CommandError(f"{path} is not valid Python: {error}") from None
    constants = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                constants[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                continue
    functions: dict[str, PrimFunc] = {}
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.ClassDef)) or not node.decorator_list:
            continue
        decorators = {ast.unparse(d) for d in node.decorator_list}
        if not decorators & {"T.prim_func", "I.ir_module", "tvm.script.ir_module"}:
            continue
        first = min(d.lineno for d in node.decorator_list)
        source = "\n".join(text.splitlines()[first - 1 : node.end_lineno])
        parsed = tir.parse(source, filename=str(path), line_offset=first - 1, extra_vars=constants)
        if isinstance(parsed, IRModule):
            functions.update(parsed.functions)
        else:
            functions[node.name] = parsed
    if not functions:
        raise CommandError(f"{path} defines no @T.prim_func or @I.ir_module")
    return IRModule(functions)


# ---------------------------------------------------------------- db


def _db(args) -> int:
    path = Path(args.db)
    if args.action != "import" and not path.exists():
        raise CommandError(f"no database at {path}; `tir tune ... --db {path}` makes one")
    with Database(path) as database:
        return _DB_ACTIONS[args.action](database, args)


def _keys(database: Database, args) -> list:
    entries = database.workloads()
    if args.workload:
        entries = [e for e in entries if args.workload in (e.key, e.name)]
        if not entries:
            raise CommandError(f"no workload {args.workload!r} in {args.db}")
    return entries


def _db_list(database: Database, args) -> int:
    table = Table(title=str(args.db))
    for column in ("workload", "key", "target", "device", "records", "ok", "best GFLOPS"):
        table.add_column(column)
    for entry in _keys(database, args):
        groups = {(r.target, r.device) for r in database.records(entry.key)}
        for target, device in sorted(groups):
            if args.target and target != args.target:
                continue
            best = database.best(entry.key, target, device, k=1)
            table.add_row(
                entry.name,
                entry.key,
                target,
                device,
                str(database.count(entry.key, target, device)),
                str(database.count(entry.key, target, device, status="ok")),
                significant(best[0].gflops) if best else "-",
            )
    console.print(table)
    return 0


def _db_best(database: Database, args) -> int:
    found = False
    for entry in _keys(database, args):
        targets = sorted({r.target for r in database.records(entry.key)})
        for target in targets:
            if args.target and target != args.target:
                continue
            for record in database.best(entry.key, target, None, k=1):
                found = True
                # Comments, so that the whole output pastes into Python after `sch = Schedule(mod)`.
                console.print(
                    f"# {entry.name} on {target} ({record.device}): {significant(record.gflops)} GFLOPS, "
                    f"{significant(record.mean_secs * 1e6)} us\n"
                    f"# record {record.id} in {args.db}, measured {_when(record.created)}",
                    soft_wrap=True,
                )
                console.print(_trace_python(record.trace), soft_wrap=True)
    if not found:
        raise CommandError(f"no successful record in {args.db}")
    return 0


def _when(created: str) -> str:
    """``2026-11-24T22:06:58.735282+00:00`` -> ``2026-11-24 22:06 UTC``."""
    day, _, clock = created.partition("T")
    return f"{day} {clock[:5]} UTC" if clock.endswith("+00:00") else created


def _trace_python(trace_json: dict) -> str:
    from schedule import Trace

    return Trace.from_json(trace_json).as_python()


def _db_export(database: Database, args) -> int:
    if not args.file:
        raise CommandError("tir db export needs a file name: tir db export records.jsonl")
    count = database.export_jsonl(args.file)
    console.print(f"wrote {count} records to {args.file}")
    return 0


def _db_import(database: Database, args) -> int:
    if not args.file:
        raise CommandError("tir db import needs a file name: tir db import records.jsonl")
    count = database.import_jsonl(args.file)
    console.print(f"imported {count} new records into {args.db}")
    return 0


def _db_plot(database: Database, args) -> int:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise CommandError("plotting needs matplotlib: pip install 'tensorir-py[plot]'") from None
    figure, axes = plt.subplots(figsize=(7, 4))
    for entry in _keys(database, args):
        for target in sorted({r.target for r in database.records(entry.key)}):
            if args.target and target != args.target:
                continue
            records = database.records(entry.key, target)
            best, curve = 0.0, []
            for record in records:
                best = max(best, record.gflops or 0.0)
                curve.append(best)
            axes.plot(range(1, len(curve) + 1), curve, label=f"{entry.name} [{target}]")
    axes.set_xlabel("trials")
    axes.set_ylabel("best GFLOPS so far")
    axes.set_title(f"tuning progress ({args.db})")
    axes.grid(alpha=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(args.out, dpi=120)
    console.print(f"wrote {args.out}")
    return 0


_DB_ACTIONS = {
    "list": _db_list,
    "best": _db_best,
    "export": _db_export,
    "import": _db_import,
    "plot": _db_plot,
}


# ---------------------------------------------------------------- show


def _show(args) -> int:
    mod = load_script(Path(args.file))
    if args.func:
        if args.func not in mod:
            raise CommandError(
                f"{args.file} has no function {args.func!r}; it has {', '.join(mod.functions)}"
            )
        mod[args.func].show()
    else:
        mod.show()
    return 0


if __name__ == "__main__":
    sys.exit(main())
