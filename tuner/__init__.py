"""The auto-tuner: design space, XGBoost cost model, evolutionary search, SQLite records, the `tir` CLI.

``tune(mod, target, trials, db)`` searches schedules and records every
measurement; ``apply_best(mod, target, db)`` replays the best one;
``Database`` reads and writes the records; ``workloads`` holds the built-in
programs (``workloads.make("matmul", "512,512,512")``).
"""

from . import workloads
from .apply import NoRecordError, apply_best
from .database import Database, DatabaseError, TuningRecord, workload_key
from .search import TuneResult, tune

__all__ = [
    "Database",
    "DatabaseError",
    "NoRecordError",
    "TuneResult",
    "TuningRecord",
    "apply_best",
    "tune",
    "workload_key",
    "workloads",
]
