"""Tuning records: an SQLite database of measured schedules, and its JSON-lines form.

The search (tuner/search.py) adds one :class:`TuningRecord` per measured
candidate; ``apply_best`` and ``tir db`` read them back. A workload is keyed by
the structural hash of the function being tuned (:func:`workload_key`), and a
record by that key, the target string and the device it ran on, so records for
other hardware are never returned. The file is SQLite in WAL mode, marked as
ours by ``PRAGMA application_id`` and versioned by ``PRAGMA user_version``;
every record is its own transaction, so several tuning processes can share a
file and a killed process loses at most the record it was writing. Records are
data: traces are JSON text, scripts are TVMScript text that only our parser
reads, and nothing loaded from a database or a JSON-lines file is executed.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import numbers
import os
import shutil
import sqlite3
import tempfile
import threading
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import tir
from tir import IRModule, PrimFunc
from tir.function import resolve_function

if TYPE_CHECKING:
    from codegen.target import Target

# Version 1 keyed workloads by a structural hash that counted block names; version 2's does not
# (block names are hints, as in TVM). A version-1 file is re-keyed from its scripts when opened,
# and version-1 JSON lines when imported, so old records are still found.
SCHEMA_VERSION = 2
# "TIRT" in ASCII: marks an SQLite file as a tuning database of this project.
APPLICATION_ID = 0x54495254
JSONL_FORMAT = "tir-tuning-records"
STATUSES = ("ok", "compile_error", "runtime_error", "wrong_result", "timeout", "invalid")

_SCHEMA = f"""
CREATE TABLE workloads (
    key TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    script TEXT NOT NULL,
    created TEXT NOT NULL
);
CREATE TABLE records (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    workload_key TEXT NOT NULL REFERENCES workloads(key),
    target TEXT NOT NULL,
    device TEXT NOT NULL,
    trace TEXT NOT NULL,
    run_secs TEXT NOT NULL,
    mean_secs REAL,
    gflops REAL,
    status TEXT NOT NULL CHECK (status IN ({", ".join(f"'{s}'" for s in STATUSES)})),
    error TEXT NOT NULL,
    meta TEXT NOT NULL,
    created TEXT NOT NULL
);
CREATE INDEX records_by_workload ON records (workload_key, target, status, mean_secs);
"""

_RECORD_COLUMNS = (
    "workload_key",
    "target",
    "device",
    "trace",
    "run_secs",
    "mean_secs",
    "gflops",
    "status",
    "error",
    "meta",
    "created",
)


class DatabaseError(Exception):
    """The tuning database cannot be opened, read or written; the message says why and what to do."""


def workload_key(mod: IRModule | PrimFunc) -> str:
    """The key of a workload: the structural hash of its "main" function (or its only one), as
    16 hex digits. Variable, buffer and function names do not change it."""
    return f"{tir.structural_hash(resolve_function(mod)):016x}"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def _json_text(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), allow_nan=False)


# ---------------------------------------------------------------- records


@dataclass(frozen=True)
class TuningRecord:
    """One measured (or failed) candidate: a row of the records table.

    ``trace`` is the schedule's trace as JSON data (``Trace.as_json()``; a JSON
    string is accepted and parsed). ``run_secs`` are the timed runs in seconds;
    ``mean_secs`` defaults to their mean. A record with status "ok" needs run
    times; any other status says why the candidate has none worth keeping and
    ``error`` holds the message. ``meta`` is free JSON data about the search
    (seed, round, ...). ``id`` and ``created`` are filled in by the database.
    """

    workload_key: str
    target: str
    device: str
    trace: Any
    run_secs: tuple[float, ...] = ()
    mean_secs: float | None = None
    gflops: float | None = None
    status: str = "ok"
    error: str = ""
    meta: dict = field(default_factory=dict)
    created: str = ""
    id: int | None = None

    def __post_init__(self) -> None:
        for name in ("workload_key", "target", "device", "error", "created"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"TuningRecord.{name} must be a str, got {getattr(self, name)!r}")
        if self.status not in STATUSES:
            raise ValueError(f"TuningRecord.status must be one of {', '.join(STATUSES)}; got {self.status!r}")
        trace = _loads("trace", self.trace) if isinstance(self.trace, str) else self.trace
        _check_json("trace", trace)
        _check_json("meta", self.meta)
        if not isinstance(self.meta, dict):
            raise TypeError(f"TuningRecord.meta must be a dict of JSON data, got {type(self.meta).__name__}")
        if not isinstance(self.run_secs, (list, tuple)):
            raise TypeError(f"TuningRecord.run_secs must be a list of seconds, got {self.run_secs!r}")
        run_secs = tuple(_finite("run_secs", t) for t in self.run_secs)
        mean_secs = self.mean_secs
        if mean_secs is None and run_secs:
            mean_secs = math.fsum(run_secs) / len(run_secs)
        if self.status == "ok" and not (mean_secs is not None and mean_secs > 0):
            raise ValueError("a TuningRecord with status 'ok' needs run_secs (or mean_secs) above zero")
        object.__setattr__(self, "trace", trace)
        object.__setattr__(self, "run_secs", run_secs)
        object.__setattr__(self, "mean_secs", None if mean_secs is None else _finite("mean_secs", mean_secs))
        object.__setattr__(self, "gflops", None if self.gflops is None else _finite("gflops", self.gflops))

    def _row(self) -> tuple:
        return (
            self.workload_key,
            self.target,
            self.device,
            _json_text(self.trace),
            _json_text(list(self.run_secs)),
            self.mean_secs,
            self.gflops,
            self.status,
            self.error,
            _json_text(self.meta),
            self.created,
        )


def _loads(name: str, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"TuningRecord.{name} is a string but not JSON text ({exc})") from None


def _check_json(name: str, value: Any) -> None:
    try:
        _json_text(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"TuningRecord.{name} must be JSON data (dicts, lists, numbers, strings): {exc}"
        ) from None


def _finite(name: str, value: Any) -> float:
    # numbers.Real admits numpy scalars, which timers and GFLOPS arithmetic often return.
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(value)
        or value < 0
    ):
        raise ValueError(f"TuningRecord.{name} must hold finite numbers >= 0, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class WorkloadEntry:
    """A row of the workloads table: the key, a name for people, and the module's script."""

    key: str
    name: str
    script: str
    created: str

    def module(self) -> IRModule:
        """The workload's IRModule, parsed from its script (parsing runs no code)."""
        parsed = tir.parse(self.script, filename=f"<workload {self.name} {self.key}>")
        return parsed if isinstance(parsed, IRModule) else IRModule.from_func(parsed)


# ---------------------------------------------------------------- errors


def _os_reason(path: Path) -> str:
    """Why the OS refuses to write ``path`` or its directory, found by trying (SQLite's own
    message, "unable to open database file", does not say)."""
    try:
        if path.exists():
            with open(path, "r+b"):
                pass
    except OSError as exc:
        return f"the file cannot be written ({exc.strerror})"
    try:
        with tempfile.TemporaryFile(dir=path.parent):
            pass
    except OSError as exc:
        return f"no file can be created in {path.parent} ({exc.strerror})"
    return "the OS reports no error when asked again"


def _free_space(path: Path) -> str:
    try:
        return f"{shutil.disk_usage(path.parent).free / 2**20:.1f} MiB free in {path.parent}"
    except OSError as exc:
        return f"free space unknown: {exc.strerror}"


def _translate(exc: sqlite3.Error, action: str, path: Path, timeout: float) -> DatabaseError:
    """A DatabaseError for an sqlite3 error, naming the file and saying what to do."""
    text = str(exc).lower()
    name = getattr(exc, "sqlite_errorname", "")
    where = f"cannot {action} {path}"
    if "locked" in text or name.startswith("SQLITE_BUSY"):
        return DatabaseError(
            f"{where}: the database is locked; another process (another tuning run?) has held it "
            f"for more than {timeout:g} s. Wait for it to finish, or use another database file"
        )
    if "not a database" in text:
        return DatabaseError(f"{path} is not a tuning database: it is not an SQLite file")
    if "disk is full" in text or name == "SQLITE_FULL":
        return DatabaseError(
            f"{where}: the disk is full ({_free_space(path)}); earlier records are kept. "
            "Free some space and run again"
        )
    if "readonly" in text or "unable to open" in text or "disk i/o" in text:
        return DatabaseError(
            f"{where}: {_os_reason(path)}. SQLite in WAL mode writes the file and creates "
            f"{path.name}-wal and {path.name}-shm beside it; make the file and its "
            "directory writable, or use a database in a writable directory"
        )
    return DatabaseError(f"{where}: {exc}")


# ---------------------------------------------------------------- the database


class Database:
    """Tuning records in the SQLite file ``path`` (created if missing).

    ``timeout`` is how long a write waits for another process holding the file
    before giving up with a DatabaseError. Use it as a context manager or call
    :meth:`close`. Safe to share between threads of one process.
    """

    def __init__(self, path: str | os.PathLike, timeout: float = 5.0) -> None:
        self.path = Path(path)
        self._timeout = timeout
        self._lock = threading.RLock()
        if self.path.is_dir():
            raise DatabaseError(
                f"{self.path} is a directory; give a file name such as {self.path / 'tuning.db'}"
            )
        if not self.path.parent.is_dir():
            raise DatabaseError(f"cannot create {self.path}: directory {self.path.parent} does not exist")
        try:
            self._conn = sqlite3.connect(
                self.path, timeout=timeout, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise _translate(exc, "open", self.path, timeout) from None
        try:
            self._open()
        except BaseException:
            self._conn.close()
            raise

    # ------------------------------------------------------------ opening

    def _open(self) -> None:
        with self._sqlite("open"):
            if self._check_identity():
                self._initialize()
            self._conn.execute("PRAGMA journal_mode = WAL")
            # In WAL mode NORMAL loses nothing when a process dies (only on power loss).
            self._conn.execute("PRAGMA synchronous = NORMAL")
            self._conn.execute("PRAGMA foreign_keys = ON")

    def _check_identity(self) -> bool:
        """Check that the file is ours and readable by this version; True if it is empty (new)."""
        application_id = self._pragma("application_id")
        version = self._pragma("user_version")
        tables = {row[0] for row in self._conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if application_id == 0 and not tables:
            return True
        if application_id != APPLICATION_ID:
            raise DatabaseError(
                f"{self.path} is an SQLite database but not a tuning database "
                f"(application_id {application_id}, expected {APPLICATION_ID}); "
                "give the path of a tuning database or of a new file"
            )
        if version > SCHEMA_VERSION:
            raise DatabaseError(
                f"{self.path} was written by a newer version of the tuner (schema version {version}; "
                f"this version reads {SCHEMA_VERSION}). Upgrade the package (pip install -U tensorir-py)"
            )
        if version == 1 and {"workloads", "records"} <= tables:
            self._rekey_version_1()
            return False
        if version < SCHEMA_VERSION or not {"workloads", "records"} <= tables:
            raise DatabaseError(
                f"{self.path} is a damaged tuning database (schema version {version}, tables: "
                f"{', '.join(sorted(tables)) or 'none'}); export what you can or start a new file"
            )
        return False

    def _rekey_version_1(self) -> None:
        """Re-key a version-1 file's workloads (and their records) by today's workload_key."""
        with self._transaction():
            if self._pragma("user_version") != 1:  # another process upgraded it since we looked
                return
            rows = self._conn.execute("SELECT key, name, script, created FROM workloads").fetchall()
            for row in rows:
                old, new = row[0], workload_key(WorkloadEntry(*row).module())
                if new == old:
                    continue
                self._conn.execute(
                    "INSERT OR IGNORE INTO workloads (key, name, script, created) VALUES (?, ?, ?, ?)",
                    (new, *row[1:]),
                )
                self._conn.execute("UPDATE records SET workload_key = ? WHERE workload_key = ?", (new, old))
                self._conn.execute("DELETE FROM workloads WHERE key = ?", (old,))
            self._conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def _initialize(self) -> None:
        with self._transaction():
            # Another process may have initialized the file since we looked.
            if self._pragma("application_id") == APPLICATION_ID:
                return
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    self._conn.execute(statement)
            self._conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            self._conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def _pragma(self, name: str) -> int:
        return self._conn.execute(f"PRAGMA {name}").fetchone()[0]

    # ------------------------------------------------------------ plumbing

    @contextlib.contextmanager
    def _sqlite(self, action: str) -> Iterator[None]:
        with self._lock:
            if self._conn is None:
                raise DatabaseError(f"the tuning database {self.path} is closed")
            try:
                yield
            except sqlite3.Error as exc:
                raise _translate(exc, action, self.path, self._timeout) from None

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        # IMMEDIATE takes the write lock up front, so waiting for another writer
        # happens here under the connection's timeout rather than as a failed commit.
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield
            self._conn.execute("COMMIT")
        except BaseException:
            # SQLite has already rolled back after some errors (a full disk, an I/O error).
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
            raise

    def close(self) -> None:
        """Close the file; later calls raise DatabaseError. Closing twice is harmless."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Database({str(self.path)!r})"

    # ------------------------------------------------------------ workloads

    def commit_workload(self, mod: IRModule | PrimFunc, name: str) -> str:
        """Store the workload (once) and return its key, :func:`workload_key` of ``mod``."""
        key = workload_key(mod)
        module = mod if isinstance(mod, IRModule) else IRModule({"main": mod})
        with self._sqlite("write a workload to"), self._transaction():
            self._conn.execute(
                "INSERT OR IGNORE INTO workloads (key, name, script, created) VALUES (?, ?, ?, ?)",
                (key, name, module.script(), _now()),
            )
        return key

    def workloads(self) -> list[WorkloadEntry]:
        """Every workload, oldest first."""
        with self._sqlite("read"):
            rows = self._conn.execute(
                "SELECT key, name, script, created FROM workloads ORDER BY rowid"
            ).fetchall()
        return [WorkloadEntry(*row) for row in rows]

    def workload(self, key: str) -> WorkloadEntry:
        """The workload with ``key``."""
        with self._sqlite("read"):
            row = self._conn.execute(
                "SELECT key, name, script, created FROM workloads WHERE key = ?", (key,)
            ).fetchone()
        if row is None:
            raise DatabaseError(
                f"no workload with key {key!r} in {self.path}; `tir db {self.path}` lists them"
            )
        return WorkloadEntry(*row)

    # ------------------------------------------------------------ records

    def add(self, record: TuningRecord) -> int:
        """Store one record in its own transaction and return its id."""
        if not isinstance(record, TuningRecord):
            raise TypeError(f"Database.add takes a TuningRecord, got {type(record).__name__}")
        row = record._row()
        if not record.created:
            row = row[:-1] + (_now(),)
        with self._sqlite("add a record to"), self._transaction():
            self._check_workload_known(record.workload_key)
            return self._insert(row)

    def _check_workload_known(self, key: str, line: str = "") -> None:
        if self._conn.execute("SELECT 1 FROM workloads WHERE key = ?", (key,)).fetchone() is None:
            raise DatabaseError(
                f"{line}workload {key!r} is not in {self.path}; "
                "store it with commit_workload(mod, name) before adding its records"
            )

    def _insert(self, row: tuple) -> int:
        placeholders = ", ".join("?" for _ in _RECORD_COLUMNS)
        cursor = self._conn.execute(
            f"INSERT INTO records ({', '.join(_RECORD_COLUMNS)}) VALUES ({placeholders})", row
        )
        return cursor.lastrowid

    def best(
        self, workload_key: str, target: str | Target, device: str | None = None, k: int = 1
    ) -> list[TuningRecord]:
        """The ``k`` fastest records with status "ok" for the workload on ``target`` (its string;
        records of other targets never match), on ``device`` or on any device when None."""
        if k < 1:
            raise ValueError(f"best() returns k >= 1 records; got k={k}")
        where, args = self._filters(workload_key, target, device, "ok")
        query = (
            f"SELECT * FROM records WHERE {where} AND mean_secs IS NOT NULL ORDER BY mean_secs, id LIMIT ?"
        )
        return self._select(query, (*args, int(k)))

    def records(
        self,
        workload_key: str | None = None,
        target: str | Target | None = None,
        device: str | None = None,
        status: str | None = None,
    ) -> list[TuningRecord]:
        """The records matching every filter that is not None, oldest first."""
        where, args = self._filters(workload_key, target, device, status)
        return self._select(f"SELECT * FROM records WHERE {where} ORDER BY id", args)

    def count(
        self,
        workload_key: str | None = None,
        target: str | Target | None = None,
        device: str | None = None,
        status: str | None = None,
    ) -> int:
        """How many records match every filter that is not None."""
        where, args = self._filters(workload_key, target, device, status)
        with self._sqlite("read"):
            return self._conn.execute(f"SELECT COUNT(*) FROM records WHERE {where}", args).fetchone()[0]

    @staticmethod
    def _filters(
        workload_key: str | None, target: str | Target | None, device: str | None, status: str | None
    ) -> tuple[str, tuple]:
        if status is not None and status not in STATUSES:
            raise ValueError(f"status must be one of {', '.join(STATUSES)}; got {status!r}")
        values = {
            "workload_key": workload_key,
            "target": None if target is None else str(target),
            "device": device,
            "status": status,
        }
        used = {column: value for column, value in values.items() if value is not None}
        where = " AND ".join(f"{column} = ?" for column in used) or "1"
        return where, tuple(used.values())

    def _select(self, query: str, args: tuple) -> list[TuningRecord]:
        with self._sqlite("read"):
            cursor = self._conn.execute(query, args)
            columns = [d[0] for d in cursor.description]
            rows = cursor.fetchall()
        return [self._record_from_row(dict(zip(columns, row))) for row in rows]

    def _record_from_row(self, row: dict) -> TuningRecord:
        try:
            row.update(
                trace=json.loads(row["trace"]),
                run_secs=tuple(json.loads(row["run_secs"])),
                meta=json.loads(row["meta"]),
            )
            return TuningRecord(**row)
        except (ValueError, TypeError) as exc:
            raise DatabaseError(f"record {row['id']} in {self.path} is damaged: {exc}") from None

    # ------------------------------------------------------------ JSON lines

    def export_jsonl(self, path_or_file: str | os.PathLike | TextIO) -> int:
        """Write a header line, every workload and every record as JSON lines; return the number
        of records. A path is written whole or not at all."""
        lines = [_json_text({"type": "header", "format": JSONL_FORMAT, "version": SCHEMA_VERSION})]
        lines += [_json_text({"type": "workload", **asdict(w)}) for w in self.workloads()]
        records = self.records()
        for record in records:
            entry = asdict(record)
            del entry["id"]
            lines.append(_json_text({"type": "record", **entry}))
        text = "\n".join(lines) + "\n"
        if isinstance(path_or_file, (str, os.PathLike)):
            _write_atomically(Path(path_or_file), text)
        else:
            path_or_file.write(text)
        return len(records)

    def import_jsonl(self, path_or_file: str | os.PathLike | TextIO) -> int:
        """Add the workloads and records of a JSON-lines export, skipping exact duplicates of stored
        records; return how many records were added. The whole file is checked first: a bad line
        raises DatabaseError naming its line number and nothing is imported."""
        name, text = _read_text(path_or_file)
        workloads, records = _parse_jsonl(name, text)
        added = 0
        with self._sqlite("import records into"), self._transaction():
            for entry in workloads:
                self._conn.execute(
                    "INSERT OR IGNORE INTO workloads (key, name, script, created) VALUES (?, ?, ?, ?)",
                    (entry.key, entry.name, entry.script, entry.created),
                )
            for number, record in records:
                self._check_workload_known(record.workload_key, f"{name}, line {number}: ")
                row = record._row()
                if not self._is_stored(row):
                    self._insert(row)
                    added += 1
        return added

    def _is_stored(self, row: tuple) -> bool:
        where = " AND ".join(f"{column} IS ?" for column in _RECORD_COLUMNS)
        return self._conn.execute(f"SELECT 1 FROM records WHERE {where} LIMIT 1", row).fetchone() is not None


def _write_atomically(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise DatabaseError(f"cannot write {path}: {exc.strerror}") from None


def _read_text(path_or_file: str | os.PathLike | TextIO) -> tuple[str, str]:
    if isinstance(path_or_file, (str, os.PathLike)):
        try:
            return str(path_or_file), Path(path_or_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else f"not UTF-8 text ({exc.reason})"
            raise DatabaseError(f"cannot read {path_or_file}: {reason}") from None
    return getattr(path_or_file, "name", "<file>"), path_or_file.read()


_WORKLOAD_FIELDS = {f.name for f in fields(WorkloadEntry)}
_RECORD_FIELDS = {f.name for f in fields(TuningRecord)} - {"id"}


def _parse_jsonl(name: str, text: str) -> tuple[list[WorkloadEntry], list[tuple[int, TuningRecord]]]:
    """Every workload and (line number, record) of a JSON-lines export, all checked."""
    workloads: list[WorkloadEntry] = []
    records: list[tuple[int, TuningRecord]] = []
    version = SCHEMA_VERSION
    for number, line in enumerate(io.StringIO(text), start=1):
        if not line.strip():
            continue
        where = f"{name}, line {number}"
        entry = _parse_line(where, line)
        kind = entry.pop("type")
        if number == 1 and kind != "header":
            raise DatabaseError(
                f"{where}: not a tuning records file (it should begin with a header line "
                f'{{"type": "header", "format": "{JSONL_FORMAT}", ...}}, as export_jsonl writes)'
            )
        if kind == "header":
            _check_header(where, entry)
            version = entry["version"]
        elif kind == "workload":
            workloads.append(_build(where, WorkloadEntry, entry, _WORKLOAD_FIELDS))
        elif kind == "record":
            records.append((number, _build(where, TuningRecord, entry, _RECORD_FIELDS)))
        else:
            raise DatabaseError(f"{where}: unknown line type {kind!r}; expected header, workload or record")
    return _rekeyed(workloads, records) if version < 2 else (workloads, records)


def _rekeyed(workloads: list[WorkloadEntry], records: list[tuple[int, TuningRecord]]):
    """Version-1 exports keyed workloads by a hash that counted block names: key them anew."""
    keys = {entry.key: workload_key(entry.module()) for entry in workloads}
    return (
        [replace(entry, key=keys[entry.key]) for entry in workloads],
        [
            (number, replace(r, workload_key=keys.get(r.workload_key, r.workload_key)))
            for number, r in records
        ],
    )


def _parse_line(where: str, line: str) -> dict:
    try:
        entry = json.loads(line)
    except json.JSONDecodeError as exc:
        raise DatabaseError(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(entry, dict) or "type" not in entry:
        raise DatabaseError(f'{where}: expected a JSON object with a "type" field')
    return entry


def _check_header(where: str, entry: Mapping) -> None:
    if entry.get("format") != JSONL_FORMAT:
        raise DatabaseError(f"{where}: header of format {entry.get('format')!r}, expected {JSONL_FORMAT!r}")
    version = entry.get("version")
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise DatabaseError(
            f"{where}: records of version {version!r}, newer than this tuner reads ({SCHEMA_VERSION}); "
            "upgrade the package (pip install -U tensorir-py)"
        )


def _build(where: str, cls: type, entry: dict, allowed: set[str]) -> Any:
    unknown = sorted(set(entry) - allowed)
    if unknown:
        raise DatabaseError(f"{where}: unknown field(s) {', '.join(unknown)} for a {cls.__name__}")
    for name in ("key", "name", "script", "created"):
        if cls is WorkloadEntry and not isinstance(entry.get(name), str):
            raise DatabaseError(f"{where}: workload field {name!r} must be a string")
    try:
        return cls(**entry)
    except (TypeError, ValueError) as exc:
        raise DatabaseError(f"{where}: {exc}") from None
