"""Tuning through a real local Ray cluster: a head and separate worker processes, on the C target.

One cluster per module (Ray's start-up is slow on a small machine): the head and
one worker advertise the resource "c", a third node advertises only "cuda" and
must never measure a candidate. The tests compare the records with a local run,
kill a worker node with SIGKILL mid-run, freeze a measuring actor (SIGSTOP: alive,
holding its device, answering nothing), add a "c" node without a C compiler, open a
workload whose runtime no node has, and interrupt the driver with Ctrl-C.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tuner import Database, tune, workload_key, workloads
from tuner.space import SpaceGenerator

ray = pytest.importorskip("ray")
cluster_utils = pytest.importorskip("ray.cluster_utils")
pytestmark = pytest.mark.slow  # a cluster's start-up; CI runs it all the same

from tuner.measure import Candidate, MeasureError, ray_runner  # noqa: E402 - after the importorskip
from tuner.measure.ray_runner import DeviceActor, RayRunner, _Spec, project_runtime_env  # noqa: E402
from tuner.tasks import TaskSpec, tune_tasks  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SHAPE = "32,32,32"


@pytest.fixture(scope="module")
def cluster():
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    head = cluster_utils.Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "resources": {"c": 1}, "include_dashboard": False},
    )
    c_worker = head.add_node(num_cpus=1, resources={"c": 1})
    cuda_only = head.add_node(num_cpus=1, resources={"cuda": 1})
    ray.init(address=head.address, log_to_driver=False, runtime_env=project_runtime_env())
    yield head, c_worker, cuda_only
    ray.shutdown()
    head.shutdown()


def _wait_until_free(resource: str, units: int) -> None:
    """Until Ray reports ``units`` of ``resource`` free (a previous test's actors are gone)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and ray.available_resources().get(resource, 0) < units:
        time.sleep(0.5)


def _wait_until_all_free(resource: str) -> None:
    """Until every unit of ``resource`` in the cluster is free (no other test's actor holds one)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if ray.available_resources().get(resource, 0) == ray.cluster_resources().get(resource, 0):
            return
        time.sleep(0.5)


def _candidates(mod, count: int) -> list[Candidate]:
    space = SpaceGenerator("c")
    schedules = [space.sample(mod, seed) for seed in range(count)]
    return [Candidate(sch.trace.as_json(), sch.mod) for sch in schedules]


def _pid(actor) -> int:
    return ray.get(actor.handle.where.remote(), timeout=60)[1]


def _ended(pid: int, seconds: float = 30) -> bool:
    """Whether process ``pid`` ends (or is a zombie) within ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return True
        except (FileNotFoundError, ProcessLookupError):
            return True
        time.sleep(0.2)
    return False


def _records(db: Path, mod) -> list:
    with Database(db) as database:
        return database.records(workload_key(mod))


def test_records_like_a_local_run_and_never_on_a_node_without_the_resource(cluster, tmp_path):
    head, _, cuda_only = cluster
    mod = workloads.make("matmul", SHAPE)
    reference = workloads.reference_for("matmul", SHAPE)
    with RayRunner(head.address) as runner:
        result = tune(
            mod, "c", 8, tmp_path / "ray.db", batch_size=4, reference=reference, runner=runner, progress=False
        )
    local = tune(mod, "c", 4, tmp_path / "local.db", batch_size=4, reference=reference, progress=False)
    assert result.trials == 8
    on_ray, on_local = _records(tmp_path / "ray.db", mod), _records(tmp_path / "local.db", mod)
    assert len(on_ray) == 8
    assert {r.device for r in on_ray} == {local.device}  # the same machine: the same C device
    assert {r.target for r in on_ray} == {r.target for r in on_local} == {"c"}
    ok = [r for r in on_ray if r.status == "ok"]
    assert ok and all(r.gflops > 0 and len(r.run_secs) == len(on_local[0].run_secs) for r in ok)
    assert all(set(r.meta) == set(on_local[0].meta) | {"node"} for r in on_ray)
    assert cuda_only.node_id not in {r.meta["node"] for r in on_ray}


def test_a_worker_node_killed_mid_run_loses_nothing(cluster, tmp_path):
    head, c_worker, _ = cluster
    mod = workloads.make("matmul", SHAPE)
    db = tmp_path / "killed.db"
    killed, at_kill = threading.Event(), []

    def kill_when_measuring():
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and not killed.is_set():
            # Once the worker node has measured (its actor may be placed a batch late, when the
            # previous test's actors have freed the resource), kill it while the run goes on.
            if db.exists() and c_worker.node_id in {r.meta.get("node") for r in _records(db, mod)}:
                head.remove_node(c_worker, allow_graceful=False)  # SIGKILL to its raylet and workers
                at_kill.append(len(_records(db, mod)))
                killed.set()
            time.sleep(0.2)

    _wait_until_free("c", 2)  # both nodes' units: an actor on each from the first batch
    killer = threading.Thread(target=kill_when_measuring)
    killer.start()
    with RayRunner(head.address) as runner:
        result = tune(
            mod,
            "c",
            24,
            db,
            batch_size=4,
            reference=workloads.reference_for("matmul", SHAPE),
            runner=runner,
            progress=False,
        )
    killer.join()
    assert killed.is_set()
    records = _records(db, mod)
    assert result.trials == 24 and len(records) == 24
    assert len({str(r.trace) for r in records}) == 24
    assert sum(r.status == "ok" for r in records) >= 18  # a killed candidate is retried, not lost
    assert at_kill[0] < 24 and any("died" in reason for reason in runner.lost)  # killed mid-run, seen


def test_a_hung_actor_is_timed_out_replaced_and_tuning_goes_on(cluster, tmp_path, monkeypatch):
    head, _, _ = cluster
    mod = workloads.make("matmul", SHAPE)
    reference = workloads.reference_for("matmul", SHAPE)
    first, second, third = (_candidates(mod, 3)[i : i + 1] for i in range(3))
    _wait_until_free("c", 1)
    with RayRunner(head.address, actors=1, run_timeout=3, answer_margin=1) as runner:
        with runner.session(mod, "c", reference=reference) as session:
            # A frozen actor mid-batch: its candidate is retried on the actor that replaces it.
            (hung,) = runner.actors
            hung_pid = _pid(hung)
            os.kill(hung_pid, signal.SIGSTOP)
            (retried,) = session.measure(first)
            assert retried.status == "ok", retried.error
            assert runner.lost == [f"{hung.name}: did not answer in time"] and hung not in runner.actors
            # Without a retry left, the candidate is recorded as a timeout with the reason.
            (replacement,) = runner.actors
            replacement_pid = _pid(replacement)
            monkeypatch.setattr(ray_runner, "MEASURE_ATTEMPTS", 1)
            os.kill(replacement_pid, signal.SIGSTOP)
            (timed_out,) = session.measure(second)
            assert timed_out.status == "timeout" and "did not answer in time" in timed_out.error
            (measured,) = session.measure(third)  # the next batch has a new actor
            assert measured.status == "ok", measured.error
        assert len(runner.lost) == 2 and len(runner.actors) == 1
        assert {hung_pid, replacement_pid}.isdisjoint({_pid(runner.actors[0])})
        assert _ended(hung_pid) and _ended(replacement_pid)  # killed, not left frozen
        result = tune(mod, "c", 4, tmp_path / "after.db", batch_size=4, reference=reference, runner=runner)
    assert result.trials == 4 and result.errors == 0


def test_a_node_without_the_runtime_is_reported_and_given_no_candidate(cluster, tmp_path, monkeypatch):
    head, _, _ = cluster
    mod = workloads.make("matmul", SHAPE)
    monkeypatch.setenv("CC", "/nonexistent/cc")  # the node's processes inherit it: no C compiler there
    no_compiler = head.add_node(num_cpus=1, resources={"c": 1})
    monkeypatch.delenv("CC")
    try:
        _wait_until_all_free("c")  # an actor on every unit: one of them on the node without a compiler
        with RayRunner(head.address) as runner, pytest.warns(RuntimeWarning, match="no C compiler"):
            result = tune(
                mod,
                "c",
                8,
                tmp_path / "partial.db",
                batch_size=4,
                reference=workloads.reference_for("matmul", SHAPE),
                runner=runner,
                progress=False,
            )
        (note,) = runner.left_out
        assert no_compiler.node_id in note and "no C compiler" in note
        records = _records(tmp_path / "partial.db", mod)
        assert result.trials == 8 and all(r.status == "ok" for r in records)
        assert no_compiler.node_id not in {r.meta["node"] for r in records}
    finally:
        head.remove_node(no_compiler)


def test_a_node_that_cannot_run_the_target_is_left_out_with_its_reason(cluster):
    head, _, _ = cluster
    mod = workloads.make("matmul", SHAPE)
    # The "cuda" node has no GPU here: its actor cannot start a CUDA runtime.
    left_out = pytest.warns(RuntimeWarning, match="is left out: node .*CUDA runtime")
    with RayRunner(head.address, resource="cuda") as runner, pytest.raises(MeasureError) as error, left_out:
        runner.session(mod, "cuda")
    assert "no Ray actor can measure this workload" in str(error.value)
    assert "actor" in str(error.value) and "cuda" in str(error.value).lower()


def test_ctrl_c_stops_the_run_and_frees_the_cluster(cluster, tmp_path):
    head, _, _ = cluster
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    args = [sys.executable, "-m", "tuner.cli", "tune", "matmul", "--shape", SHAPE, "--batch", "2"]
    args += ["--trials", "200", "--db", "r.db", "--ray", head.address]
    process = subprocess.Popen(args, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    mod = workloads.make("matmul", SHAPE)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and process.poll() is None:
        if (tmp_path / "r.db").exists() and len(_records(tmp_path / "r.db", mod)) >= 2:
            break
        time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr.decode()
    kept = len(_records(tmp_path / "r.db", mod))
    assert 2 <= kept < 200
    deadline = time.monotonic() + 60  # the run's actors are gone: every unit of "c" is free again
    while time.monotonic() < deadline:
        if ray.available_resources().get("c", 0) == ray.cluster_resources().get("c", 0):
            break
        time.sleep(0.5)
    assert ray.available_resources().get("c", 0) == ray.cluster_resources().get("c", 0)


def test_many_workloads_share_the_cluster(cluster, tmp_path):
    head, _, _ = cluster
    specs = [
        TaskSpec(name, workloads.make(name, shape), workloads.reference_for(name, shape))
        for name, shape in (("matmul", SHAPE), ("softmax", "16,64"))
    ]
    with RayRunner(head.address) as runner:
        results = tune_tasks(
            specs, "c", 8, tmp_path / "tasks.db", batch_size=4, runner=runner, progress=False
        )
    assert [r.trials for r in results] == [4, 4]  # a round each, nothing more to spend
    for spec in specs:
        records = _records(tmp_path / "tasks.db", spec.mod)
        assert len(records) == 4 and all("node" in r.meta for r in records)


@pytest.mark.skipif(len(getattr(os, "sched_getaffinity", lambda _: ())(0)) < 2, reason="needs 2 cores")
def test_cpu_measuring_actors_of_one_node_take_disjoint_cores(cluster):
    head, _, _ = cluster
    node = head.add_node(num_cpus=1, resources={"c_slices": 2})  # one node, two measuring units
    spec = _Spec(workloads.make("matmul", SHAPE), "c", None, 0, 30.0)
    actor_class = ray.remote(DeviceActor).options(num_cpus=0, resources={"c_slices": 1})
    actors = [actor_class.remote("c_slices") for _ in range(2)]
    try:
        box = [ray.put(spec)]
        assert all(opened for opened, _ in ray.get([a.open.remote(1, box) for a in actors], timeout=120))
        first, second = ray.get([a.cores.remote() for a in actors])
        machine = sorted(os.sched_getaffinity(0))
        per = len(machine) // 2
        assert len(first) == len(second) == per and not set(first) & set(second)
        assert set(first) | set(second) <= set(machine)
    finally:
        for actor in actors:
            ray.kill(actor)
        head.remove_node(node)
