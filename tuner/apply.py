"""``apply_best``: the Schedule replayed from the best record of a workload on a target."""

from __future__ import annotations

from pathlib import Path

from codegen.target import Target
from schedule import Schedule, Trace
from tir.function import IRModule, PrimFunc

from .database import Database, workload_key


class NoRecordError(LookupError):
    """The database holds no successful record for the workload on the target (and device)."""


def apply_best(
    mod: IRModule | PrimFunc, target: Target | str, db_path: str | Path, device: str | None = None
) -> Schedule:
    """Replay the fastest "ok" record of ``mod`` on ``target`` (any device unless ``device`` is given).

    Raises NoRecordError (never returns None) when there is none, saying which
    workload and target were looked up and how to tune them.
    """
    target = Target.parse(target)
    key = workload_key(mod)
    with Database(db_path) as database:
        best = database.best(key, str(target), device, k=1)
        if not best:
            where = f"target {str(target)!r}" + (f" on device {device!r}" if device else "")
            raise NoRecordError(
                f"{db_path} has no successful record of workload {key} for {where}; "
                f"tune it first: tuner.tune(mod, {str(target)!r}, trials=64, db={str(db_path)!r}), "
                "or `tir tune` on the command line"
            )
        sch = Schedule(mod)
        Trace.apply_json_to_schedule(best[0].trace, sch)
    return sch
