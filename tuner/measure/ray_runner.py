"""Measuring on a Ray cluster: builds as Ray tasks anywhere, measurements in one Ray actor per device.

``tune(..., runner=RayRunner(address))`` (or ``tir tune ... --ray ADDRESS``) connects
to a Ray cluster whose worker nodes advertise the target's custom resource
(``ray start --address ADDRESS --resources '{"metal": 1}'``); with no address
it starts a Ray instance on this machine. The runner places one
:class:`DeviceActor` per unit of that resource (default: the target's kind,
``c``, ``cuda`` or ``metal``); each actor holds, per workload, an ordinary
:class:`~tuner.measure.Measurer` on its node, whose runner process checks and
times the candidates there, so a candidate is timed on the device it was built
for and its record carries that device's name (records of an M1 and an M2 never
mix). Builds (lowering, printing, compiling C) are Ray tasks of one CPU each.
The driver alone writes the database. Faults: a build that fails or overruns is
recorded as such; an actor that dies (its node killed) or does not answer in
time is dropped and its candidate retried once on another actor, else recorded
as an error with the reason; a node whose runtime is missing is left out of
that workload with its reason, and the session fails only when no node can
measure. Actors measuring on the CPU (C) share their node's cores: each claims
its own slice (cores / units of the resource on the node), so eight actors of a
16-core node time their kernels on two cores each instead of all on core 0.
A Ctrl-C kills this run's busy actors; ``close`` kills the rest and disconnects,
which ends the run's builds (and stops a Ray instance the runner started).
"""

from __future__ import annotations

import importlib
import os
import time
import warnings
from collections import Counter, deque
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass, replace
from itertools import count
from pathlib import Path
from typing import Any

from codegen.target import Target
from tir import IRModule

from . import Candidate, Measurer, MeasureResult, Reference
from .builder import BUILT, BuildOutcome, BuildTask, build_candidate
from .runner import STARTUP_SECONDS, MeasureError

RAY_EXTRA = "pip install 'tensorir-py[ray]'"
# A measurement may compile the candidate again on its node (a C build made on another node).
COMPILE_MARGIN_SECONDS = 60.0
MEASURE_ATTEMPTS = 2  # a candidate whose actor dies is retried once elsewhere
# A killed actor's unit of the resource comes free a moment after the kill; a batch left without
# actors waits this long for it, to place the replacement.
REPLACE_SECONDS = 30.0
PACKAGES = ("tir", "schedule", "codegen", "tuner")


class RayUnavailableError(ImportError):
    """Ray is not installed; the message names the extra that installs it."""


def import_ray() -> Any:
    """The ``ray`` module, or :class:`RayUnavailableError` naming the extra that installs it."""
    try:
        import ray
    except ImportError:
        raise RayUnavailableError(f"--ray needs Ray, which is not installed: {RAY_EXTRA}") from None
    return ray


def project_runtime_env() -> dict:
    """The Ray job's runtime environment: the project's packages travel with the work (Ray caches
    them by content on each node), so a worker node needs Ray and our dependencies, not a checkout.
    ``RayRunner`` passes it to ``ray.init``; a caller that starts Ray itself passes it too."""
    return {"py_modules": [str(Path(importlib.import_module(name).__file__).parent) for name in PACKAGES]}


@dataclass(frozen=True)
class _Spec:
    """What an actor needs to open a workload's Measurer: sent once through Ray's object store."""

    workload: IRModule
    target: str
    reference: Reference | None
    seed: int
    run_timeout: float


class DeviceActor:
    """One measuring device on one node (a Ray actor): a Measurer per workload it has been given."""

    def __init__(self, resource: str = ""):
        self._measurers: dict[int, Measurer] = {}
        self._failures: dict[int, str] = {}
        self._resource = resource
        self._cores_lock = None  # the lock file of the slice of cores this actor claimed

    def cores(self) -> list[int]:
        """The cores this actor's measurements run on (for tests and diagnostics)."""
        return sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []

    def _claim_cores(self) -> None:
        """Take a free slice of this node's cores for CPU measurements (Linux; once per actor).

        The node's units of the resource divide its cores into slices; a slice is claimed
        with a lock file that the kernel frees when this process dies, so a replacement
        actor takes the slice of the one it replaces. Every thread of this process (and
        so the runner process it starts) is bound to the slice, and OpenMP gets one
        thread per core of it.
        """
        if self._cores_lock is not None or not hasattr(os, "sched_setaffinity"):
            return
        import fcntl
        import tempfile

        import ray

        node = ray.get_runtime_context().get_node_id()
        units = next((n["Resources"].get(self._resource, 0) for n in ray.nodes() if n["NodeID"] == node), 0)
        cores = sorted(os.sched_getaffinity(0))
        slots = int(units)
        if slots < 2 or len(cores) < slots:
            return
        per = len(cores) // slots
        for slot in range(slots):
            lock = open(  # noqa: SIM115 - held open for the actor's life: the lock is the claim
                Path(tempfile.gettempdir()) / f"tir-ray-{self._resource}-{node[:16]}-{slot}.lock", "w"
            )
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                lock.close()
                continue
            self._cores_lock = lock
            mine = cores[slot * per : (slot + 1) * per]
            for thread in os.listdir("/proc/self/task"):
                os.sched_setaffinity(int(thread), mine)
            os.environ["OMP_NUM_THREADS"] = str(len(mine))
            return

    def where(self) -> tuple[str, int]:
        """This actor's Ray node id and process id (for tests and diagnostics)."""
        import ray

        return ray.get_runtime_context().get_node_id(), os.getpid()

    def open(self, session: int, spec_box: list) -> tuple[bool, str]:
        """``(True, device name)``, or ``(False, why this node cannot measure the workload)``."""
        import ray

        if session in self._failures:
            return False, self._failures[session]
        if session not in self._measurers:
            spec: _Spec = ray.get(spec_box[0])
            if not Target.parse(spec.target).is_gpu:
                self._claim_cores()
            try:
                self._measurers[session] = Measurer(
                    spec.workload,
                    spec.target,
                    reference=spec.reference,
                    workers=1,
                    run_timeout=spec.run_timeout,
                    seed=spec.seed,
                )
            except Exception as error:  # noqa: BLE001 - a missing runtime, a broken reference: the node's
                node = ray.get_runtime_context().get_node_id()
                self._failures[session] = f"node {node}: {type(error).__name__}: {error}"
                return False, self._failures[session]
        return True, self._measurers[session].device_name

    def measure(self, session: int, spec_box: list, outcome: BuildOutcome) -> tuple[bool, Any]:
        """``(True, MeasureResult)`` with the device and node filled in, or ``(False, reason)``."""
        opened, device = self.open(session, spec_box)
        if not opened:
            return False, device
        result = self._measurers[session].run([outcome])[0]
        return True, replace(result, device=device, node=self.where()[0])

    def close_session(self, session: int) -> None:
        measurer = self._measurers.pop(session, None)
        if measurer is not None:
            measurer.close()


@dataclass(eq=False)
class _Actor:
    handle: Any
    name: str  # for messages: "actor 3"


class RayRunner:
    """Measures on a Ray cluster; see the module docstring.

    ``resource`` is the custom resource each measuring actor takes one unit of (default: the
    target's kind); ``actors`` caps how many are placed (default: every unit in the cluster);
    ``cpus`` sizes the Ray instance started on this machine when there is no ``address``. An
    actor that has not answered ``run_timeout + answer_margin`` seconds after it was given a
    candidate (the margin covers compiling a C candidate built on another node) counts as hung:
    it is killed and replaced, and the candidate retried once elsewhere.

    >>> runner = RayRunner("10.0.0.5:6379")  # doctest: +SKIP
    >>> tune(mod, "metal", 200, "runs.db", runner=runner); runner.close()  # doctest: +SKIP
    """

    def __init__(
        self,
        address: str | None = None,
        *,
        resource: str | None = None,
        actors: int | None = None,
        cpus: int | None = None,
        build_timeout: float = 60,
        run_timeout: float = 30,
        answer_margin: float = COMPILE_MARGIN_SECONDS,
    ):
        self.ray = import_ray()
        self.address = address
        self.resource = resource
        self.max_actors = actors
        self.cpus = cpus
        self.build_timeout = build_timeout
        self.run_timeout = run_timeout
        self.answer_margin = answer_margin
        self.actors: list[_Actor] = []
        self.lost: list[str] = []  # why actors were dropped, for the error when none is left
        self.left_out: list[str] = []  # actors whose node cannot measure a workload, and why
        self._connected = False  # this runner called ray.init (and so disconnects in close)
        self._names = count(1)
        self._sessions = count(1)

    # ------------------------------------------------------------ the cluster

    def _connect(self, target: Target) -> None:
        ray = self.ray
        self.resource = self.resource or target.kind
        if ray.is_initialized():
            return
        options = {
            "include_dashboard": False,
            "log_to_driver": False,
            "configure_logging": False,
            "runtime_env": project_runtime_env(),
        }
        if self.address:
            ray.init(address=self.address, **options)
        else:
            cpus = self.cpus or os.cpu_count() or 1
            ray.init(num_cpus=cpus, resources={self.resource: self.max_actors or 1}, **options)
        self._connected = True

    def ensure_actors(self, wait: float = 0.0) -> None:
        """Place an actor on every free unit of the resource (up to ``actors``): after a node died,
        a unit it freed or a node that joined gets one, and a killed actor its replacement. With no
        actor left while the cluster has units, wait up to ``wait`` seconds for one to come free (a
        kill frees it late)."""
        deadline = time.monotonic() + wait
        self._place()
        while not self.actors and time.monotonic() < deadline and self._units():
            time.sleep(0.2)
            self._place()
        if not self.actors:
            where = f"the Ray cluster at {self.address}" if self.address else "the local Ray instance"
            lost = "".join(f"\n  {reason}" for reason in self.lost)
            raise MeasureError(
                f"no node of {where} advertises the resource {self.resource!r}: start a worker with "
                f"`ray start --address ADDRESS --resources '{{\"{self.resource}\": 1}}'`{lost}"
            )

    def _units(self) -> int:
        """Units of the resource in the cluster, free or not."""
        return int(self.ray.cluster_resources().get(self.resource, 0))

    def _place(self) -> None:
        """Place an actor on each free unit (up to ``actors`` in all)."""
        free = int(self.ray.available_resources().get(self.resource, 0))
        wanted = self._units()
        if self.max_actors is not None:
            wanted = min(wanted, self.max_actors)
        actor_class = self.ray.remote(DeviceActor).options(
            num_cpus=0, resources={self.resource: 1}, max_concurrency=1
        )
        placed = 0
        while len(self.actors) < wanted and free > placed:
            self.actors.append(_Actor(actor_class.remote(self.resource), f"actor {next(self._names)}"))
            placed += 1

    def leave_out(self, actor: _Actor, reason: str) -> None:
        """Report an actor whose node cannot measure a workload (it is given none of its candidates)."""
        note = f"{actor.name} is left out: {reason}"
        if note not in self.left_out:
            self.left_out.append(note)
            warnings.warn(f"Ray runner: {note}", RuntimeWarning, stacklevel=2)

    def rotate(self, actor: _Actor) -> None:
        """Put ``actor`` last: candidates go round the actors, so every device is used and a dead
        one is found at once."""
        self.actors.remove(actor)
        self.actors.append(actor)

    def drop(self, actor: _Actor, reason: str) -> None:
        """Forget an actor that died or hung (killing it in case it is alive)."""
        if actor in self.actors:
            self.actors.remove(actor)
            self.lost.append(f"{actor.name}: {reason}")
        self.ray.kill(actor.handle, no_restart=True)

    def check(self, target: Target) -> None:
        """Nothing to check here: the target's runtime is needed on the measuring nodes, not on the
        driver (a Linux driver tunes for the Macs of the cluster); the sessions say which lack it."""

    def session(
        self, workload: IRModule, target: Target, *, reference: Reference | None = None, seed: int = 0
    ) -> RaySession:
        target = Target.parse(target)
        self._connect(target)
        self.ensure_actors(REPLACE_SECONDS)
        spec = _Spec(workload, str(target), reference, seed, self.run_timeout)
        return RaySession(self, next(self._sessions), str(target), self.ray.put(spec))

    def close(self) -> None:
        """Kill this runner's actors; if it connected to Ray, disconnect (the Ray instance it started
        stops, a cluster it joined goes on)."""
        for actor in self.actors:
            self.ray.kill(actor.handle, no_restart=True)
        self.actors.clear()
        if self._connected:
            self.ray.shutdown()
            self._connected = False

    def __enter__(self) -> RayRunner:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


class RaySession:
    """One workload measured through a :class:`RayRunner`'s actors (made by ``RayRunner.session``)."""

    def __init__(self, runner: RayRunner, number: int, target: str, spec_ref: Any):
        self.runner = runner
        self.target = target
        self.ray = runner.ray
        self.number = number
        self._spec_box = [spec_ref]  # boxed: Ray passes it on unresolved, the actor fetches it once
        self._unable: dict[_Actor, str] = {}  # actors whose node cannot measure this workload
        self._opened: set[_Actor] = set()
        self._build = self.ray.remote(build_candidate).options(num_cpus=1, max_retries=1)
        self.device_name = self._open_everywhere()

    def _open_everywhere(self) -> str:
        """Open the workload on every actor; the device most of them have names the session."""
        refs = {a.handle.open.remote(self.number, self._spec_box): a for a in self.runner.actors}
        ready, _ = self.ray.wait(list(refs), num_returns=len(refs), timeout=STARTUP_SECONDS)
        devices: Counter[str] = Counter()
        reasons = []
        for ref, actor in refs.items():
            if ref not in ready:
                self.runner.drop(actor, "did not start in time")
                reasons.append(f"{actor.name}: did not start in time")
                continue
            try:
                opened, text = self.ray.get(ref)
            except self.ray.exceptions.RayError as error:
                self.runner.drop(actor, f"died while opening the workload ({type(error).__name__})")
                reasons.append(f"{actor.name}: died: {error}")
                continue
            if opened:
                self._opened.add(actor)
                devices[text] += 1
            else:
                self._leave_out(actor, text)
                reasons.append(f"{actor.name}: {text}")
        if not devices:
            listed = "".join(f"\n  {reason}" for reason in reasons)
            raise MeasureError(f"no Ray actor can measure this workload:{listed}")
        return devices.most_common(1)[0][0]

    def _leave_out(self, actor: _Actor, reason: str) -> None:
        self._unable[actor] = reason
        self.runner.leave_out(actor, reason)

    def _usable(self) -> list[_Actor]:
        return [a for a in self.runner.actors if a not in self._unable]

    def measure(self, candidates: Sequence[Candidate]) -> list[MeasureResult]:
        """Build, check and time ``candidates`` on the cluster; one result each, in the same order."""
        self.runner.ensure_actors(REPLACE_SECONDS)
        batch = _Batch(self, candidates)
        try:
            return batch.run()
        except BaseException:
            batch.stop()  # Ctrl-C: this run's work stops on every node
            raise

    def close(self) -> None:
        for actor in self.runner.actors:
            actor.handle.close_session.remote(self.number)

    def __enter__(self) -> RaySession:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


class _Batch:
    """One ``RaySession.measure`` call: builds in flight, built candidates waiting, measurements in flight."""

    def __init__(self, session: RaySession, candidates: Sequence[Candidate]):
        self.session = session
        self.ray = session.ray
        self.results: list[MeasureResult | None] = [None] * len(candidates)
        self.attempts = [0] * len(candidates)
        self.waiting = deque(
            (index, BuildTask(c.mod, session.target, c.source_override)) for index, c in enumerate(candidates)
        )
        # No more builds in flight than the cluster has CPUs: a build's time limit starts when it is
        # submitted, so one must not spend it queued behind the others.
        self.max_builds = max(1, int(self.ray.cluster_resources().get("CPU", 1)))
        self.builds: dict[Any, tuple[int, float]] = {}
        self.built: deque[tuple[int, BuildOutcome]] = deque()
        self.running: dict[Any, tuple[int, _Actor, float, BuildOutcome]] = {}
        self.replace = False  # an actor was dropped in this batch

    def run(self) -> list[MeasureResult]:
        while self.waiting or self.builds or self.built or self.running:
            while self.waiting and len(self.builds) < self.max_builds:
                index, task = self.waiting.popleft()
                self.builds[self.session._build.remote(task)] = (index, time.monotonic())
            self._dispatch()
            refs = list(self.builds) + list(self.running)
            if not refs:
                continue
            ready, _ = self.ray.wait(refs, num_returns=1, timeout=self._seconds_to_deadline())
            for ref in ready:
                if ref in self.builds:
                    self._built(ref)
                else:
                    self._measured(ref)
            self._expire()
        return self.results  # type: ignore[return-value]

    def _dispatch(self) -> None:
        if self.replace:  # an actor was dropped: place its replacement on the unit it frees
            self.replace = False
            wait = REPLACE_SECONDS if self.built and not self.session._usable() else 0.0
            with suppress(MeasureError):  # none placed: what is built is recorded below
                self.session.runner.ensure_actors(wait)
        busy = {actor for _, actor, _, _ in self.running.values()}
        idle = [a for a in self.session._usable() if a not in busy]
        while self.built and idle:
            index, outcome = self.built.popleft()
            actor = idle.pop(0)
            self.session.runner.rotate(actor)
            ref = actor.handle.measure.remote(self.session.number, self.session._spec_box, outcome)
            limit = self.session.runner.run_timeout + self.session.runner.answer_margin
            if actor not in self.session._opened:
                limit += STARTUP_SECONDS
            self.running[ref] = (index, actor, time.monotonic() + limit, outcome)
        if self.built and not self.session._usable():
            reasons = "; ".join(self.session.runner.lost + list(self.session._unable.values()))
            while self.built:
                index, outcome = self.built.popleft()
                error = f"no Ray actor is left to measure it ({reasons})"
                self.results[index] = MeasureResult(
                    "runtime_error", error=error, build_secs=outcome.build_secs
                )

    def _seconds_to_deadline(self) -> float:
        build_timeout = self.session.runner.build_timeout
        deadlines = [started + build_timeout for _, started in self.builds.values()]
        deadlines += [deadline for _, _, deadline, _ in self.running.values()]
        return max(0.0, min(deadlines) - time.monotonic()) if deadlines else 0.0

    def _built(self, ref) -> None:
        index, _ = self.builds.pop(ref)
        try:
            outcome: BuildOutcome = self.ray.get(ref)
        except self.ray.exceptions.RayError as error:
            self.results[index] = MeasureResult("compile_error", error=f"the Ray build task failed: {error}")
            return
        if outcome.status != BUILT:
            self.results[index] = MeasureResult(
                outcome.status, error=outcome.error, build_secs=outcome.build_secs
            )
        else:
            self.built.append((index, outcome))

    def _measured(self, ref) -> None:
        index, actor, _, outcome = self.running.pop(ref)
        try:
            measured, value = self.ray.get(ref)
        except self.ray.exceptions.RayError as error:
            self.session.runner.drop(actor, f"died while measuring ({type(error).__name__})")
            self.replace = True
            self._retry(index, outcome, "runtime_error", f"the Ray actor measuring it died: {error}")
            return
        self.session._opened.add(actor)
        if measured:
            self.results[index] = value
        else:  # this node cannot measure the workload: another one will
            self.session._leave_out(actor, value)
            self.built.appendleft((index, outcome))

    def _retry(self, index: int, outcome: BuildOutcome, status: str, error: str) -> None:
        self.attempts[index] += 1
        if self.attempts[index] < MEASURE_ATTEMPTS:
            self.built.appendleft((index, outcome))
        else:
            error = f"{error} (after {self.attempts[index]} attempts)"
            self.results[index] = MeasureResult(status, error=error, build_secs=outcome.build_secs)

    def _expire(self) -> None:
        now = time.monotonic()
        build_timeout = self.session.runner.build_timeout
        for ref, (index, started) in list(self.builds.items()):
            if now - started >= build_timeout:
                del self.builds[ref]
                self.ray.cancel(ref, force=True)
                error = f"building the candidate took longer than {build_timeout:g} s (build_timeout)"
                self.results[index] = MeasureResult("timeout", error=error, build_secs=now - started)
        for ref, (index, actor, deadline, outcome) in list(self.running.items()):
            if now >= deadline:
                del self.running[ref]
                self.session.runner.drop(actor, "did not answer in time")
                self.replace = True
                self._retry(index, outcome, "timeout", f"{actor.name} did not answer in time and was killed")

    def stop(self) -> None:
        """Kill the actors measuring (Ctrl-C). The builds in flight are not cancelled: Ray 2.60's
        driver can abort on a force-cancelled task whose reply is under way, and each build ends
        within its time limit anyway, or with the job when the driver disconnects (``close``)."""
        for _, actor, _, _ in self.running.values():
            self.session.runner.drop(actor, "stopped by the driver")
