"""What the C compiler costs a tuning run: gcc's CPU seconds to build every candidate of a database.

    python benchmarks/compile_cost.py before.db after.db [--shape 512,512,512]

For each database (a matmul tuned on the C target, e.g. by ``tir tune matmul
--shape 512,512,512 --trials 64 --db before.db``), every record's trace is
replayed and printed, then compiled from an empty compiler cache one at a time;
the compiler's CPU time (user + system, of the child processes) is summed. CPU
time, not wall time, so that the number holds on a machine other work shares.
Prints per database: the candidates, the compiler's CPU seconds, the longest
source in lines, the share of it spent on the five slowest sources, and the best
GFLOPS measured while tuning.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ["TIR_CACHE_DIR"] = tempfile.mkdtemp(prefix="tir-compile-cost-")  # before codegen reads it

from codegen.build import generate_source  # noqa: E402
from codegen.c.compiler import compile_library, find_compiler  # noqa: E402
from codegen.target import Target  # noqa: E402
from schedule import Schedule, Trace  # noqa: E402
from tuner import Database, workload_key, workloads  # noqa: E402


def children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("databases", nargs="+")
    parser.add_argument("--shape", default="512,512,512")
    args = parser.parse_args()
    mod = workloads.make("matmul", args.shape)
    target = Target.parse("c")
    compiler = find_compiler(target)
    for path in args.databases:
        with Database(path) as database:
            records = database.records(workload_key(mod), "c")
        seconds = []
        lines = []
        for record in records:
            sch = Schedule(mod)
            Trace.apply_json_to_schedule(record.trace, sch)
            source, _ = generate_source(sch.mod, target)
            start = children_cpu_seconds()
            compile_library(source, compiler)
            seconds.append(children_cpu_seconds() - start)
            lines.append(len(source.splitlines()))
        total = sum(seconds)
        slowest = sum(sorted(seconds)[-5:]) / total if total else 0.0
        best = max((r.gflops or 0.0 for r in records), default=0.0)
        longest = max(lines, default=0)
        print(
            f"{path}: {len(records)} candidates, gcc {total:.1f} CPU s, longest source {longest} lines, "
            f"five slowest {slowest:.0%} of it, best during tuning {best:.0f} GFLOPS"
        )


if __name__ == "__main__":
    main()
