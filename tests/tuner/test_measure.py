"""Measurement on the C target: every way a candidate can fail is recorded, and the next one still runs.

A 64^3 matmul is the workload. Correct schedules (drawn by the design space)
measure "ok" with positive times; a different program with the same signature
is "wrong_result"; a dynamic shape is "invalid"; broken C is "compile_error";
a kernel writing to address 0 is "runtime_error" and one that loops forever is
"timeout", and in both cases the candidate after it measures "ok" on a fresh
runner. A compiler that hangs (an #include of a FIFO nobody writes) is a build
"timeout" and leaves no compiler behind. The expected outputs come from a numpy
reference when given, else from the C build of the workload, which is checked
against tir.interpret. Ctrl-C stops every child process, and so does killing
the tuner outright. On an NVIDIA GPU (``-m gpu``) the same for CUDA candidates,
with a faulting kernel, a hanging kernel and an NVRTC error.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import tir
import tuner.measure as measure_module
from codegen.build import generate_source
from codegen.cuda.nvcc import nvcc_available
from tir.bfloat16 import to_bfloat16_bits
from tuner import workloads
from tuner.database import STATUSES
from tuner.measure import Candidate, MeasureError, Measurer, MeasureResult
from tuner.measure.arrays import mismatch
from tuner.space import SpaceGenerator

SIZE = 64
RUN_TIMEOUT = 3.0

SIGNATURE = "void tir_main(float* restrict A, float* restrict B, float* restrict C)"
SEGFAULT_SOURCE = SIGNATURE + " { *(volatile float*)0 = A[0]; }\n"
HANG_SOURCE = SIGNATURE + " { volatile int spin = 1; while (spin) { } }\n"
NO_WRITE_SOURCE = SIGNATURE + " { }\n"


def _program(body: str, size: int = SIZE) -> tir.IRModule:
    n = size
    return tir.parse(
        f"""
@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer(({n}, {n}), "float32"), B: T.Buffer(({n}, {n}), "float32"),
             C: T.Buffer(({n}, {n}), "float32")):
        for i, j, k in T.grid({n}, {n}, {n}):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
{body}
"""
    )


INIT = "                with T.init():\n                    C[vi, vj] = T.float32(0)\n"
# B read as B[j, k]: same signature as the matmul, other numbers.
TRANSPOSED_BODY = "                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]\n"
TRANSPOSED_B = _program(INIT + TRANSPOSED_BODY)
ACCUMULATE = _program("                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n")


def _workload() -> tir.IRModule:
    return workloads.matmul(SIZE, SIZE, SIZE)


def _scheduled(seed: int) -> Candidate:
    sch = SpaceGenerator("c").sample(_workload(), seed=seed)
    return Candidate(sch.trace.as_json(), sch.mod)


def _unscheduled(mod: tir.IRModule, source: str | None = None) -> Candidate:
    return Candidate({"version": 1, "insts": []}, mod, source_override=source)


def _assert_ok(result: MeasureResult) -> None:
    assert result.status == "ok", result.error
    assert len(result.run_secs) == 3 and all(t > 0 for t in result.run_secs)
    assert 0 < result.mean_secs < 1 and result.error == ""
    assert result.build_secs > 0
    assert (
        result.runner_secs >= result.phases.load_secs + result.phases.check_secs + result.phases.timing_secs
    )
    assert result.phases.timing_secs > 0 and result.phases.check_secs > 0


@pytest.fixture(scope="module")
def measurer():
    with Measurer(_workload(), "c", workers=2, build_timeout=30, run_timeout=RUN_TIMEOUT) as m:
        yield m


def test_correct_schedules_measure_ok(measurer):
    results = measurer.measure([_scheduled(seed) for seed in range(3)] + [_unscheduled(_workload())])
    for result in results:
        _assert_ok(result)
    assert "cores)" in measurer.device_name and "-march=native" in measurer.device_name


def test_each_failure_has_its_status_and_the_batch_goes_on(measurer):
    dynamic = tir.parse(
        """
@T.prim_func
def main(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi] + T.float32(1)
"""
    )
    candidates = [
        _unscheduled(TRANSPOSED_B),
        _unscheduled(_workload(), source=NO_WRITE_SOURCE),
        _unscheduled(dynamic),
        _unscheduled(workloads.matmul(32, 32, 32)),
        _unscheduled(_workload(), source="void tir_main(float* A) { return 1 }\n"),
        _scheduled(7),
    ]
    wrong, unwritten, dynamic_shape, other_shape, broken, good = measurer.measure(candidates)
    assert wrong.status == "wrong_result" and wrong.run_secs == ()
    assert "output C differs from the reference at" in wrong.error
    assert "max abs error" in wrong.error and "first at index (" in wrong.error
    assert unwritten.status == "wrong_result" and "at 4096 of 4096 elements" in unwritten.error
    assert "are NaN" in unwritten.error
    # a dynamic shape builds for C now; it is not the workload's signature
    assert dynamic_shape.status == "invalid" and "float32['n']" in dynamic_shape.error
    assert other_shape.status == "invalid"
    assert "takes (float32[32, 32], float32[32, 32], float32[32, 32])" in other_shape.error
    assert broken.status == "compile_error" and "cc failed to compile" in broken.error
    assert "error" in broken.error.split("failed to compile", 1)[1]
    _assert_ok(good)
    assert {r.status for r in (wrong, dynamic_shape, broken, good)} <= set(STATUSES)


@pytest.mark.parametrize("target", ["c", "metal"])
def test_gpu_candidates_run_as_they_are_built_cpu_ones_after_the_batch(target):
    """On a GPU target (here Metal on the host simulator) the runner checks and times each candidate
    as soon as its build ends, while the workers build the rest; on the CPU no compiler may run beside
    a kernel being timed, so the whole batch is built first. Results come back in order either way
    (the simulator checks numbers but does not time: its right answers end as runtime errors)."""
    space = SpaceGenerator(target)
    schedules = (space.sample(_workload(), 1), space.sample(TRANSPOSED_B, 1), space.sample(_workload(), 2))
    candidates = [Candidate(sch.trace.as_json(), sch.mod) for sch in schedules]
    device = "sim" if target == "metal" else None
    with Measurer(_workload(), target, workers=2, device=device, run_timeout=60) as m:
        events = []
        real_run, real_build = m._run, m._builder.build

        def run(outcome):
            events.append("run")
            return real_run(outcome)

        def build(tasks, on_built=None):
            events.append("build")
            outcomes = real_build(tasks, on_built)
            events.append("built")
            return outcomes

        m._run, m._builder.build = run, build
        first, wrong, second = m.measure(candidates)
    streamed = ["build", "run", "run", "run", "built"]
    assert events == (streamed if target == "metal" else ["build", "built", "run", "run", "run"])
    for result in (first, second):
        if target == "c":
            _assert_ok(result)
        else:  # the simulator checks the numbers, then refuses to time: host times say nothing of a GPU
            assert result.status == "runtime_error" and "never reports timings" in result.error
    assert wrong.status == "wrong_result" and "max abs error" in wrong.error


def test_a_crashing_kernel_is_a_runtime_error_and_the_next_runs(measurer):
    crash, good = measurer.measure([_unscheduled(_workload(), source=SEGFAULT_SOURCE), _scheduled(1)])
    assert crash.status == "runtime_error"
    assert "runner process died (signal SIGSEGV)" in crash.error
    _assert_ok(good)


def test_a_hanging_kernel_times_out_and_the_next_runs(measurer):
    start = time.monotonic()
    hang, good = measurer.measure([_unscheduled(_workload(), source=HANG_SOURCE), _scheduled(2)])
    assert hang.status == "timeout" and f"within {RUN_TIMEOUT:g} s" in hang.error
    assert time.monotonic() - start < RUN_TIMEOUT + 10
    _assert_ok(good)


def _fifo_source(tmp_path: Path) -> str:
    fifo = tmp_path / "never_written"
    os.mkfifo(fifo)
    return f'#include "{fifo}"\n'  # cc blocks opening it: a compiler that hangs


def _processes_mentioning(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and text in (entry / "cmdline").read_bytes().decode(errors="replace"):
                found.append(int(entry.name))
        except OSError:
            pass
    return found


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not Path("/proc").is_dir(), reason="needs FIFOs and /proc")
def test_a_hanging_build_times_out_and_its_compiler_is_killed(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("TIR_CACHE_DIR", str(cache))
    with Measurer(_workload(), "c", workers=2, build_timeout=2, run_timeout=RUN_TIMEOUT) as m:
        hung, good = m.measure([_unscheduled(_workload(), source=_fifo_source(tmp_path)), _scheduled(3)])
        assert hung.status == "timeout" and "longer than 2 s (build_timeout)" in hung.error
        assert hung.build_secs >= 2
        _assert_ok(good)
        # The compiler's command line names its output in the cache: none may survive the worker.
        assert _processes_mentioning(str(cache)) == []


def test_numpy_reference_is_what_candidates_are_checked_against():
    with Measurer(_workload(), "c", workers=1, reference=lambda inputs: [inputs[0] @ inputs[1]]) as m:
        (good,) = m.measure([_scheduled(4)])
        _assert_ok(good)
    with Measurer(_workload(), "c", workers=1, reference=lambda inputs: [inputs[0] @ inputs[1].T]) as m:
        (good, transposed) = m.measure([_scheduled(4), _unscheduled(TRANSPOSED_B)])
        assert good.status == "wrong_result"
        _assert_ok(transposed)


def test_reference_with_the_wrong_outputs_is_refused():
    with pytest.raises(MeasureError, match=r"reference returned 2 arrays; the workload writes 1 \(C\)"):
        Measurer(_workload(), "c", workers=1, reference=lambda inputs: [inputs[0], inputs[1]])


def test_c_reference_is_cross_checked_against_the_executor(monkeypatch):
    generate = measure_module.generate_source

    def tampered(mod, target):
        source, functions = generate(mod, target)
        return source.replace("A[", "B["), functions  # the C reference now computes B @ B

    monkeypatch.setattr(measure_module, "generate_source", tampered)
    with pytest.raises(MeasureError, match=r"built for C, disagrees with tir.interpret: output C differs"):
        Measurer(_workload(), "c", workers=1)


def test_an_output_read_before_written_starts_from_random_values():
    with Measurer(ACCUMULATE, "c", workers=1) as m:
        accumulate, with_init = m.measure([_unscheduled(ACCUMULATE), _unscheduled(_workload())])
    _assert_ok(accumulate)
    assert with_init.status == "wrong_result"  # it ignores C's starting values


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not Path("/proc").is_dir(), reason="needs FIFOs and /proc")
@pytest.mark.parametrize("phase", ["build", "run"])
def test_ctrl_c_stops_every_child_process(phase, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("TIR_CACHE_DIR", str(cache))
    m = Measurer(_workload(), "c", workers=2, run_timeout=60, build_timeout=60)
    _assert_ok(m.measure([_scheduled(5)])[0])
    children = m.pids
    assert len(children) == 2  # a build worker and the runner
    if phase == "build":
        stuck = _unscheduled(_workload(), source=_fifo_source(tmp_path))
    else:
        stuck = _unscheduled(_workload(), source=HANG_SOURCE)
    # Ctrl-C one second in, from a timer signal: a helper thread would make forking workers unsafe.
    previous = signal.signal(signal.SIGALRM, lambda *_: signal.raise_signal(signal.SIGINT))
    signal.setitimer(signal.ITIMER_REAL, 1.0)
    try:
        with pytest.raises(KeyboardInterrupt):
            m.measure([stuck, _scheduled(6)])
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert m.pids == []
    for pid in children:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert _processes_mentioning(str(cache)) == []


def _running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for init to reap it does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel's parent-death signal")
def test_children_die_with_a_killed_tuner(tmp_path):
    script = f"""
import os, sys
sys.path.insert(0, {str(Path(__file__).parents[2])!r})
from tests.tuner.test_measure import _scheduled, _workload
from tuner.measure import Measurer
m = Measurer(_workload(), "c", workers=1)
m.measure([_scheduled(0)])
print(*m.pids, flush=True)
os.kill(os.getpid(), 9)
"""
    output = tmp_path / "pids"
    with output.open("w") as stdout:  # a file: a pipe would stay open as long as any child lives
        subprocess.run([sys.executable, "-c", script], stdout=stdout, timeout=120, check=False)
    children = [int(pid) for pid in output.read_text().split()]
    assert len(children) == 2
    deadline = time.monotonic() + 10
    while any(_running(pid) for pid in children) and time.monotonic() < deadline:
        time.sleep(0.05)
    survivors = [pid for pid in children if _running(pid)]
    for pid in survivors:  # leave no orphan behind, even when failing
        os.kill(pid, signal.SIGKILL)
    assert survivors == []


def test_random_arguments_are_seeded_and_away_from_zero():
    func = _workload()["main"]
    first, again = (measure_module.random_arguments(func, seed=3) for _ in range(2))
    other = measure_module.random_arguments(func, seed=4)
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    assert not np.array_equal(first[0], other[0])
    assert all(a.dtype == np.float32 and a.min() >= 0.5 and a.max() < 1.5 for a in first)


def _cuda_source(mod: tir.IRModule, body: str) -> str:
    """A CUDA source defining every kernel that ``mod`` launches with ``body``."""
    _, functions = generate_source(mod, "cuda")
    kernels = []
    for launch in functions[0].launches:
        params = ", ".join(f"float* p{i}" for i in range(len(launch.buffers)))
        kernels.append(f'extern "C" __global__ void {launch.name}({params}) {{ {body} }}')
    return "\n".join(kernels) + "\n"


@pytest.mark.gpu
def test_cuda_candidates_are_checked_timed_and_survive_faults_and_hangs():
    size = 256
    try:
        m = Measurer(workloads.matmul(size, size, size), "cuda", workers=4, run_timeout=20)
    except MeasureError as error:
        pytest.skip(f"no CUDA runtime here: {error}")
    space = SpaceGenerator("cuda")
    good = [space.sample(workloads.matmul(size, size, size), seed=seed) for seed in range(4)]
    wrong = space.sample(_program(INIT + TRANSPOSED_BODY, size=size), seed=0)
    fault = _cuda_source(good[0].mod, "*(volatile float*)16 = 1.0f;")
    # A volatile local does not survive NVRTC; the clock does.
    hang = _cuda_source(good[0].mod, "long long t = clock64(); while (clock64() >= t) { }")
    candidates = [Candidate(sch.trace.as_json(), sch.mod) for sch in (*good, wrong)]
    with m:
        assert "NVIDIA" in m.device_name
        results = m.measure(
            [
                *candidates[:2],
                candidates[4],
                Candidate({}, good[0].mod, source_override=fault),
                candidates[2],
                Candidate({}, good[0].mod, source_override=hang),
                candidates[3],
                Candidate({}, good[0].mod, source_override="not CUDA"),
            ]
        )
    ok1, ok2, wrong_result, faulted, ok3, hung, ok4, broken = results
    for result in (ok1, ok2, ok3, ok4):
        _assert_ok(result)
        # Where nvcc is installed the build workers compiled the candidate: the runner only loaded it.
        assert result.phases.compiler == ("nvcc" if nvcc_available() else "nvrtc")
        assert result.runner_secs >= result.phases.load_secs + result.phases.timing_secs > 0
    assert wrong_result.status == "wrong_result" and "max abs error" in wrong_result.error
    assert faulted.status == "runtime_error" and "main_kernel0" in faulted.error
    assert hung.status == "timeout"
    assert broken.status == "compile_error" and "NVRTC" in broken.error


def test_float16_tolerance_grows_with_the_terms_summed():
    expected = np.full((4, 4), 100.0, dtype=np.float16)
    off = expected.copy()
    off[2, 3] = 103.0  # 3% off
    assert mismatch("C", expected.copy(), expected) is None
    message = mismatch("C", off, expected)
    assert "at 1 of 16 elements: max abs error 3; first at index (2, 3): got 103, expected 100" in message
    assert "(rtol=0.01, atol=0.01)" in message
    assert mismatch("C", off, expected, terms=1024) is None  # rtol 0.04 for 1024-term sums
    wide = expected.astype(np.float32)
    assert mismatch("C", off.astype(np.float32), wide, terms=1024) is not None  # float32 does not grow


def test_bfloat16_outputs_are_compared_as_values():
    expected = to_bfloat16_bits(np.full((4, 4), 100.0))
    off = expected.copy()
    off[1, 2] = to_bfloat16_bits(np.array(104.0))  # 4% off: one bfloat16 step is 0.5 here
    assert mismatch("C", expected.copy(), expected, dtype="bfloat16") is None
    assert mismatch("C", to_bfloat16_bits(np.full((4, 4), 101.0)), expected, dtype="bfloat16") is None
    message = mismatch("C", off, expected, dtype="bfloat16")
    assert "got 104, expected 100 (rtol=0.03, atol=0.03)" in message
    assert mismatch("C", off, expected, terms=1024, dtype="bfloat16") is None  # grows like float16


def test_bfloat16_matmul_is_measured_against_its_reference():
    mod = workloads.make("matmul", "16,16,32", "bfloat16")
    for reference in (None, workloads.reference_for("matmul", "16,16,32", "bfloat16")):
        with Measurer(mod, "c", workers=1, reference=reference) as m:
            (result,) = m.measure([_unscheduled(mod)])
            _assert_ok(result)
    with Measurer(mod, "c", workers=1, reference=lambda inputs: [np.zeros((16, 16), np.float32)]) as m:
        (result,) = m.measure([_unscheduled(mod)])
        assert result.status == "wrong_result"


def test_a_build_that_answered_while_the_runner_timed_others_is_not_a_timeout():
    """GPU batches time each candidate inside the build loop; an answer that arrives meanwhile is
    read on the next pass, however long the runner took, and never killed as a build over time."""
    from tuner.measure.builder import BuildPool, BuildTask

    small = SpaceGenerator("c").sample(workloads.make("matmul", "16,16,16"), seed=0).mod
    pool = BuildPool(4, timeout=2.0)
    try:
        pool.build([BuildTask(small, "c")] * 4)  # forks the workers, fills the compile cache
        outcomes = pool.build([BuildTask(small, "c")] * 12, lambda _i, _o: time.sleep(0.7))
    finally:
        pool.close()
    assert [o.status for o in outcomes] == ["built"] * 12, [o.error for o in outcomes if o.status != "built"]
