"""Tests of the tuning records database (tuner/database.py): round trips of records and
JSON-lines exports, best() kept apart by target and device, two processes writing at
once, a process killed while writing, and the messages for files that are not ours,
newer schemas, locks, full disks, read-only places and corrupt export lines."""

from __future__ import annotations

import io
import json
import multiprocessing
import os
import signal
import sqlite3
import stat
import tempfile
from dataclasses import replace

import numpy as np
import pytest

import tir
from tuner import workloads
from tuner.database import (
    APPLICATION_ID,
    SCHEMA_VERSION,
    Database,
    DatabaseError,
    TuningRecord,
    workload_key,
)

TRACE = {"version": 1, "insts": [{"kind": "get_block", "args": {"name": "C"}, "outputs": ["b0"]}]}
TARGET = "cuda -arch=sm_90"


def make_record(
    key: str, seconds: float, target: str = TARGET, device: str = "H200", **fields
) -> TuningRecord:
    return TuningRecord(key, target, device, TRACE, (seconds, seconds * 1.5), gflops=1.0 / seconds, **fields)


@pytest.fixture
def db(tmp_path):
    with Database(tmp_path / "tuning.db") as database:
        yield database


@pytest.fixture
def key(db):
    return db.commit_workload(workloads.matmul(8, 8, 8), "matmul")


def test_records_round_trip_through_the_file(tmp_path):
    path = tmp_path / "tuning.db"
    mod = workloads.softmax(4, 16)
    stored = [
        make_record("", 0.25, meta={"seed": 7, "round": 0}),
        TuningRecord("", "c", "Xeon", TRACE, status="compile_error", error="nvcc: error: x"),
        TuningRecord("", "c", "Xeon", json.dumps(TRACE), (1e-3,), mean_secs=2e-3, status="wrong_result"),
    ]
    with Database(path) as db:
        key = db.commit_workload(mod, "softmax")
        ids = [db.add(replace(record, workload_key=key)) for record in stored]
    with Database(path) as db:
        loaded = db.records()
        (entry,) = db.workloads()
    assert [r.id for r in loaded] == ids
    for original, back in zip(stored, loaded):
        assert back.created
        assert replace(back, id=None, created="") == replace(original, workload_key=key)
    assert loaded[0].mean_secs == pytest.approx(0.3125)
    assert loaded[2].trace == TRACE
    assert loaded[2].mean_secs == 2e-3
    assert TuningRecord(key, "c", "Xeon", TRACE, [np.float32(0.5), np.float64(1.5)]).mean_secs == 1.0
    assert (entry.key, entry.name) == (key, "softmax")
    assert entry.script == mod.script()
    assert tir.structural_equal(entry.module(), mod)


def test_workload_key_is_the_functions_structural_hash(db):
    mod = workloads.matmul(8, 8, 8)
    key = db.commit_workload(mod, "matmul")
    assert key == workload_key(mod) == workload_key(mod["main"])
    assert db.commit_workload(mod["main"], "again") == key
    assert [w.name for w in db.workloads()] == ["matmul"]
    assert workload_key(workloads.matmul(8, 8, 16)) != key
    assert db.workload(key).name == "matmul"
    with pytest.raises(DatabaseError, match="no workload with key 'nope'"):
        db.workload("nope")


def test_best_orders_by_mean_time_and_keeps_targets_and_devices_apart(db, key):
    other = db.commit_workload(workloads.matmul(16, 16, 16), "matmul")
    db.add(make_record(key, 0.030))
    db.add(make_record(key, 0.010, device="A100"))
    db.add(make_record(key, 0.020))
    db.add(make_record(key, 0.001, target="metal", device="M2"))
    db.add(make_record(key, 0.001, target="cuda", device="H200"))
    db.add(make_record(other, 0.0001))
    db.add(TuningRecord(key, TARGET, "H200", TRACE, (0.0001,), status="wrong_result", error="max error 3.0"))
    db.add(TuningRecord(key, TARGET, "H200", TRACE, status="timeout", error="took over 10 s"))

    assert [r.mean_secs for r in db.best(key, TARGET, k=10)] == pytest.approx([0.0125, 0.025, 0.0375])
    assert [r.device for r in db.best(key, TARGET, k=10)] == ["A100", "H200", "H200"]
    assert [r.mean_secs for r in db.best(key, TARGET, "H200", k=5)] == pytest.approx([0.025, 0.0375])
    (best,) = db.best(key, TARGET, "H200")
    assert best.mean_secs == pytest.approx(0.025)
    assert [r.target for r in db.best(key, "metal", k=5)] == ["metal"]
    assert db.best(key, "metal", "H200") == []
    assert db.best(key, "cuda -arch=sm_80") == []
    assert [r.workload_key for r in db.best(other, TARGET, k=5)] == [other]


def test_records_and_count_filter_on_every_field(db, key):
    db.add(make_record(key, 0.5))
    db.add(make_record(key, 0.5, device="A100"))
    db.add(TuningRecord(key, "c", "Xeon", TRACE, status="runtime_error", error="segfault"))
    assert db.count() == 3
    assert db.count(key) == 3
    assert db.count(target=TARGET) == 2
    assert db.count(target=TARGET, device="A100") == 1
    assert db.count(status="ok") == 2
    assert db.count(status="runtime_error", target="c") == 1
    assert db.count("other") == 0
    assert [r.error for r in db.records(status="runtime_error")] == ["segfault"]
    assert [r.device for r in db.records(key, TARGET)] == ["H200", "A100"]
    with pytest.raises(ValueError, match="status must be one of ok, compile_error"):
        db.count(status="fine")


def test_bad_records_are_refused_before_they_reach_the_file(db, key):
    with pytest.raises(ValueError, match="status must be one of"):
        TuningRecord(key, TARGET, "H200", TRACE, (1.0,), status="great")
    with pytest.raises(ValueError, match="status 'ok' needs run_secs"):
        TuningRecord(key, TARGET, "H200", TRACE)
    with pytest.raises(ValueError, match="run_secs must hold finite numbers"):
        TuningRecord(key, TARGET, "H200", TRACE, (float("nan"),))
    with pytest.raises(ValueError, match="trace is a string but not JSON"):
        TuningRecord(key, TARGET, "H200", "sch.split(...)", (1.0,))
    with pytest.raises(TypeError, match="trace must be JSON data"):
        TuningRecord(key, TARGET, "H200", {"f": object()}, (1.0,))
    with pytest.raises(TypeError, match="run_secs must be a list of seconds"):
        TuningRecord(key, TARGET, "H200", TRACE, 0.5)
    with pytest.raises(ValueError, match="k >= 1"):
        db.best(key, TARGET, k=0)
    with pytest.raises(DatabaseError, match="workload 'unknown' is not in .*commit_workload"):
        db.add(make_record("unknown", 1.0))
    assert db.count() == 0


def test_export_and_import_round_trip(tmp_path, db, key):
    db.add(make_record(key, 0.5, meta={"seed": 1}))
    db.add(make_record(key, 0.25, device="A100"))
    db.add(TuningRecord(key, "c", "Xeon", TRACE, status="invalid", error="too many threads: 2048 > 1024"))
    path = tmp_path / "records.jsonl"
    assert db.export_jsonl(path) == 3
    lines = path.read_text().splitlines()
    assert json.loads(lines[0]) == {
        "type": "header",
        "format": "tir-tuning-records",
        "version": SCHEMA_VERSION,
    }
    assert [json.loads(line)["type"] for line in lines[1:]] == ["workload", "record", "record", "record"]

    with Database(tmp_path / "copy.db") as copy:
        assert copy.import_jsonl(path) == 3
        assert [replace(r, id=None) for r in copy.records()] == [replace(r, id=None) for r in db.records()]
        assert copy.workloads() == db.workloads()
        assert copy.best(key, TARGET)[0].device == "A100"
        assert copy.import_jsonl(path) == 0
        assert copy.count() == 3
        copy.add(make_record(key, 0.125))
        exported = io.StringIO()
        copy.export_jsonl(exported)
    # Into the original: only the record it lacks is added.
    assert db.import_jsonl(io.StringIO(exported.getvalue())) == 1
    assert db.count() == 4


def edit_field(line: str, **changes) -> str:
    return json.dumps({**json.loads(line), **changes})


def write_export(db: Database, tmp_path, edit) -> str:
    path = tmp_path / "records.jsonl"
    db.export_jsonl(path)
    lines = path.read_text().splitlines()
    edit(lines)
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda lines: lines.__setitem__(3, lines[3][:40]), r"records.jsonl, line 4: not valid JSON"),
        (lambda lines: lines.insert(2, "[1, 2]"), r"line 3: expected a JSON object with a \"type\" field"),
        (lambda lines: lines.pop(0), r"line 1: not a tuning records file"),
        (
            lambda lines: lines.__setitem__(
                0, '{"type": "header", "format": "tir-tuning-records", "version": 9}'
            ),
            rf"line 1: records of version 9, newer than this tuner reads \({SCHEMA_VERSION}\); upgrade",
        ),
        (lambda lines: lines.pop(1), r"line 2: workload '[0-9a-f]+' is not in .*commit_workload"),
        (
            lambda lines: lines.__setitem__(3, edit_field(lines[3], trace="sch.split(l0, [None, 8])")),
            r"line 4: TuningRecord.trace is a string but not JSON text",
        ),
        (
            lambda lines: lines.__setitem__(2, lines[2].replace('"status":"ok"', '"status":"good"')),
            r"line 3: TuningRecord.status must be one of",
        ),
        (
            lambda lines: lines.__setitem__(2, lines[2].replace('"device"', '"code":"import os","device"')),
            r"line 3: unknown field\(s\) code for a TuningRecord",
        ),
    ],
)
def test_import_reports_the_bad_line_and_imports_nothing(tmp_path, db, key, edit, message):
    db.add(make_record(key, 0.5))
    db.add(make_record(key, 0.25))
    path = write_export(db, tmp_path, edit)
    with Database(tmp_path / "fresh.db") as fresh:
        with pytest.raises(DatabaseError, match=message):
            fresh.import_jsonl(path)
        assert fresh.count() == 0
        assert fresh.workloads() == []


# ---------------------------------------------------------------- several processes


def add_records(path: str, worker: int, count: int, start) -> None:
    start.wait(60)
    with Database(path, timeout=30) as db:
        key = db.commit_workload(workloads.matmul(8, 8, 8), "matmul")
        for number in range(count):
            db.add(make_record(key, 0.001 * (number + 1), device=f"worker{worker}", meta={"n": number}))


def test_two_processes_creating_and_filling_one_file_keep_every_record(tmp_path):
    path = tmp_path / "shared.db"
    context = multiprocessing.get_context("spawn")
    start = context.Event()
    workers = [context.Process(target=add_records, args=(str(path), w, 200, start)) for w in range(2)]
    for worker in workers:
        worker.start()
    start.set()
    for worker in workers:
        worker.join(120)
        assert worker.exitcode == 0
    with Database(path) as db:
        assert db.count() == 400
        assert len(db.workloads()) == 1
        for w in range(2):
            numbers = [r.meta["n"] for r in db.records(device=f"worker{w}")]
            assert numbers == list(range(200))


def add_until_killed(path: str, key: str, committed) -> None:
    with Database(path, timeout=30) as db:
        number = 0
        while True:
            record_id = db.add(make_record(key, 0.001, meta={"n": number, "padding": "x" * 2000}))
            committed.put(record_id)
            number += 1


def test_a_process_killed_while_writing_loses_no_committed_record(tmp_path, key, db):
    context = multiprocessing.get_context("spawn")
    committed = context.Queue()
    writer = context.Process(target=add_until_killed, args=(str(db.path), key, committed))
    writer.start()
    seen = [committed.get(timeout=60) for _ in range(300)]
    os.kill(writer.pid, signal.SIGKILL)
    writer.join(30)
    assert writer.exitcode == -signal.SIGKILL
    db.close()
    with Database(db.path) as reopened:
        assert reopened._conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        stored = {r.id for r in reopened.records()}
        assert set(seen) <= stored
        assert [r.meta["n"] for r in reopened.records()] == list(range(len(stored)))
        reopened.add(make_record(key, 0.5))


# ---------------------------------------------------------------- files that are not ours


def test_a_file_that_is_not_sqlite_is_refused_and_left_alone(tmp_path):
    path = tmp_path / "notes.db"
    path.write_text("these are my notes, not a database\n" * 200)
    before = path.read_bytes()
    with pytest.raises(DatabaseError, match="notes.db is not a tuning database: it is not an SQLite file"):
        Database(path)
    assert path.read_bytes() == before


def test_another_sqlite_database_is_refused_and_left_alone(tmp_path):
    path = tmp_path / "other.db"
    other = sqlite3.connect(path)
    other.execute("CREATE TABLE people (name TEXT)")
    other.commit()
    other.close()
    before = path.read_bytes()
    with pytest.raises(DatabaseError, match=r"other.db is an SQLite database but not a tuning database"):
        Database(path)
    assert path.read_bytes() == before
    assert not (tmp_path / "other.db-wal").exists()


def test_our_id_without_our_tables_is_reported_as_damaged(tmp_path):
    path = tmp_path / "half.db"
    half = sqlite3.connect(path)
    half.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    half.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    half.execute("CREATE TABLE workloads (key TEXT)")
    half.commit()
    half.close()
    with pytest.raises(DatabaseError, match="half.db is a damaged tuning database .*tables: workloads"):
        Database(path)


def test_a_newer_schema_asks_for_an_upgrade(tmp_path):
    path = tmp_path / "future.db"
    with Database(path) as db:
        db.commit_workload(workloads.window_sum(16), "window_sum")
    future = sqlite3.connect(path)
    future.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    future.commit()
    future.close()
    with pytest.raises(
        DatabaseError,
        match=rf"newer version of the tuner \(schema version {SCHEMA_VERSION + 1}; "
        rf".*reads {SCHEMA_VERSION}\)\. Upgrade",
    ):
        Database(path)


OLD_KEY = "0123456789abcdef"  # a version-1 key: its hash counted block names


def test_a_version_1_file_is_rekeyed_and_its_records_found(tmp_path):
    path = tmp_path / "old.db"
    mod = workloads.matmul(8, 8, 8)
    with Database(path) as db:
        key = db.commit_workload(mod, "matmul")
        db.add(make_record(key, 0.5))
    old = sqlite3.connect(path)
    old.execute("UPDATE workloads SET key = ?", (OLD_KEY,))
    old.execute("UPDATE records SET workload_key = ?", (OLD_KEY,))
    old.execute("PRAGMA user_version = 1")
    old.commit()
    old.close()
    with Database(path) as db:
        (record,) = db.best(workload_key(mod), TARGET, "H200")
        assert record.workload_key == key and [w.key for w in db.workloads()] == [key]
    check = sqlite3.connect(path)
    assert check.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    check.close()


def test_version_1_json_lines_are_rekeyed_on_import(db, key, tmp_path):
    db.add(make_record(key, 0.5))
    exported = tmp_path / "old.jsonl"
    db.export_jsonl(exported)
    lines = [json.loads(line) for line in exported.read_text().splitlines()]
    for line in lines:
        line.update({"version": 1} if line["type"] == "header" else {})
        line.update({"key": OLD_KEY} if line["type"] == "workload" else {})
        line.update({"workload_key": OLD_KEY} if line["type"] == "record" else {})
    exported.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    with Database(tmp_path / "fresh.db") as fresh:
        assert fresh.import_jsonl(exported) == 1
        (record,) = fresh.best(key, TARGET, "H200")
        assert record.workload_key == key


def test_a_directory_or_a_missing_directory_is_refused(tmp_path):
    with pytest.raises(DatabaseError, match="is a directory; give a file name"):
        Database(tmp_path)
    with pytest.raises(DatabaseError, match="directory .*nowhere does not exist"):
        Database(tmp_path / "nowhere" / "tuning.db")


def test_closed_database_says_so(tmp_path):
    db = Database(tmp_path / "tuning.db")
    db.close()
    db.close()
    with pytest.raises(DatabaseError, match="tuning.db is closed"):
        db.count()


# ---------------------------------------------------------------- locks, full disks, read-only places


def test_a_locked_database_names_the_file_and_the_other_process(tmp_path, db, key):
    db.add(make_record(key, 0.5))
    holder = sqlite3.connect(db.path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with Database(db.path, timeout=0.2) as waiting:
            assert waiting.count() == 1
            with pytest.raises(DatabaseError) as info:
                waiting.add(make_record(key, 0.25))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    message = str(info.value)
    assert f"cannot add a record to {db.path}: the database is locked" in message
    assert "another process" in message
    db.add(make_record(key, 0.125))
    assert db.count() == 2


def test_a_full_disk_keeps_earlier_records(db, key):
    db.add(make_record(key, 0.5))
    # A page limit makes SQLite report SQLITE_FULL exactly as a full disk does.
    pages = db._conn.execute("PRAGMA page_count").fetchone()[0]
    db._conn.execute(f"PRAGMA max_page_count = {pages}")
    big = {"version": 1, "insts": [], "blob": "x" * 100_000}
    with pytest.raises(
        DatabaseError, match="cannot add a record to .*: the disk is full .*earlier records are kept"
    ):
        db.add(replace(make_record(key, 0.25), trace=big))
    assert [r.mean_secs for r in db.records()] == [0.625]


def permissions_are_enforced() -> bool:
    """False where chmod does not stop writes (root, or a process with CAP_DAC_OVERRIDE)."""
    with tempfile.TemporaryDirectory() as folder:
        os.chmod(folder, stat.S_IRUSR | stat.S_IXUSR)
        try:
            with open(os.path.join(folder, "probe"), "w"):
                return False
        except PermissionError:
            return True
        finally:
            os.chmod(folder, stat.S_IRWXU)


needs_permissions = pytest.mark.skipif(
    not permissions_are_enforced(), reason="this process ignores file permissions (root?)"
)


@pytest.fixture
def read_only(tmp_path):
    """Makes paths read-only for the test and writable again afterwards (so tmp_path can be removed)."""
    changed = []

    def make_read_only(path):
        mode = stat.S_IRUSR | (stat.S_IXUSR if path.is_dir() else 0)
        changed.append((path, path.stat().st_mode))
        path.chmod(mode)

    yield make_read_only
    for path, mode in reversed(changed):
        path.chmod(mode)


@needs_permissions
def test_a_read_only_directory_gives_the_os_reason(tmp_path, read_only):
    folder = tmp_path / "locked_folder"
    folder.mkdir()
    read_only(folder)
    with pytest.raises(
        DatabaseError,
        match="cannot open .*tuning.db: no file can be created in .*locked_folder \\(Permission denied\\)",
    ):
        Database(folder / "tuning.db")


@needs_permissions
def test_an_existing_database_in_a_read_only_directory_is_kept(tmp_path, read_only):
    folder = tmp_path / "shared"
    folder.mkdir()
    with Database(folder / "tuning.db") as db:
        key = db.commit_workload(workloads.matmul(8, 8, 8), "matmul")
        db.add(make_record(key, 0.5))
    read_only(folder)
    reason = r"cannot open .*tuning.db: no file can be created in .*shared \(Permission denied\)"
    with pytest.raises(DatabaseError, match=reason + ".*make the file and its directory writable"):
        Database(folder / "tuning.db")
    folder.chmod(0o700)
    with Database(folder / "tuning.db") as db:
        assert db.count() == 1


@needs_permissions
def test_a_read_only_file_gives_the_os_reason(tmp_path, read_only):
    path = tmp_path / "tuning.db"
    with Database(path) as db:
        key = db.commit_workload(workloads.matmul(8, 8, 8), "matmul")
    read_only(path)
    with Database(path) as db:
        assert db.count() == 0
        with pytest.raises(
            DatabaseError, match=r"add a record to .*: the file cannot be written \(Permission denied\)"
        ):
            db.add(make_record(key, 0.25))
