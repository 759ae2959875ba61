"""The Metal runtime's own code (codegen/metal/runtime.py) driven through the PyObjC stand-in, in CI.

``tests/codegen/metal_standin.py`` stands in for PyObjC's calling protocol, not for
a GPU; the kernels run on the host simulator with the bytes the runtime bound.
Covered: the seed schedules (threadgroup memory, barriers, two kernels through a
workspace) against numpy, GPU timing, compile options (safe math unless
``-fast-math``), buffers made once and reused with scalars through
``setBytes``, no autoreleased objects left without a pool, and the error paths (a
compile error's MSL line, a pipeline thread limit, a failed command buffer). Scalar
conversion is in test_scalar_arguments.py; the ``-m metal`` tests for a real Mac
are test_metal_runtime.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from codegen import build
from codegen.errors import BuildError, CompileError, LaunchError
from codegen.metal import runtime
from tests.codegen import metal_standin
from tests.codegen.seed_kernels import REFERENCES, SEED_KERNELS, SMALL_SIZES, random_arguments
from tests.codegen.test_metal_runtime import SCALE, SCALE_SOURCE, WINDOW_SOURCE, _window
from tests.codegen.test_metal_sim import FAULTY_FUNCTIONS, FAULTY_SOURCE, METAL
from tir import T


@pytest.fixture
def ledger(monkeypatch):
    return metal_standin.install(monkeypatch)


@pytest.mark.parametrize("kernel", sorted(SEED_KERNELS))
def test_seed_schedules_match_numpy_and_the_simulator(kernel, ledger):
    mod = SEED_KERNELS[kernel](SMALL_SIZES[kernel])
    arrays, simulated = random_arguments(mod), random_arguments(mod)
    module = build(mod, "metal")
    assert module.device_name == metal_standin.DEVICE_NAME
    module["main"](*arrays)
    build(mod, "metal", device="sim")["main"](*simulated)
    np.testing.assert_allclose(arrays[-1], REFERENCES[kernel](*arrays), rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(arrays[-1], simulated[-1])


@pytest.mark.parametrize(
    "kernel, inputs", [("vector_add", [0, 1]), ("window_sum", [0]), ("matmul_shared", [0, 1])]
)
def test_buffers_the_kernels_only_read_are_declared_device_const(kernel, inputs, ledger):
    build(SEED_KERNELS[kernel](SMALL_SIZES[kernel]), "metal")
    assert ledger.read_only == {"main_kernel0": inputs}


def test_two_kernels_through_a_workspace_and_gpu_timing(ledger):
    module = runtime.load(SCALE_SOURCE, [SCALE], METAL)
    a = np.random.default_rng(1).standard_normal(1024).astype(np.float32)
    d = np.zeros(1024, dtype=np.float32)
    times = module.time("scale", [a, d], number=3, repeat=2)
    assert len(times) == 2 and all(t > 0 for t in times)
    np.testing.assert_allclose(d, 2 * a + a[(np.arange(1024) * 5) % 1024], rtol=1e-6)


@T.prim_func
def cancel(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
    for i in T.thread_binding(128, thread="threadIdx.x"):
        with T.block("B"):
            vi = T.axis.spatial(128, i)
            B[vi] = (A[vi] + T.float32(1e20)) - T.float32(1e20)


@pytest.mark.parametrize("has_math_mode", [True, False], ids=["macOS 15 mathMode", "fastMathEnabled"])
def test_safe_math_by_default_so_numerics_follow_ieee(has_math_mode, monkeypatch):
    ledger = metal_standin.install(monkeypatch, has_math_mode=has_math_mode)
    a = np.random.default_rng(2).random(128).astype(np.float32)
    b = np.full(128, np.nan, dtype=np.float32)
    build(cancel, "metal")["cancel"](a, b)
    assert ledger.math_modes == [metal_standin.MATH_MODE_SAFE]
    np.testing.assert_array_equal(b, (a + np.float32(1e20)) - np.float32(1e20))  # all zero in IEEE


def test_fast_math_target_option_turns_it_on(ledger):
    a = np.random.default_rng(2).random(128).astype(np.float32)
    b, simulated = np.full(128, np.nan, dtype=np.float32), np.full(128, np.nan, dtype=np.float32)
    build(cancel, "metal -fast-math")["cancel"](a, b)
    build(cancel, "metal -fast-math", device="sim")["cancel"](a, simulated)
    assert ledger.math_modes == [metal_standin.MATH_MODE_FAST]
    np.testing.assert_array_equal(b, a)  # reassociated: what the README warns fast math may do
    np.testing.assert_array_equal(simulated, a)  # the simulator takes the same liberty (g++ -ffast-math)


def test_buffers_are_made_once_and_scalars_go_through_set_bytes(ledger):
    from tests.codegen.test_scalar_arguments import SIZE, affine_on_threads

    module = build(affine_on_threads(), "metal")
    a, b = np.ones(SIZE, dtype=np.float32), np.zeros(SIZE, dtype=np.float32)
    module["main"](a, b, 2.0, 1)
    made, live = ledger.buffers_created, ledger.live_bytes
    assert made == 2 and live == 2 * SIZE * 4  # A and B; no MTLBuffer for either scalar
    for n in range(50):
        module["main"](a, b, 2.0, n)
        np.testing.assert_array_equal(b, np.full(SIZE, 2.0 + n, dtype=np.float32))
    module.benchmark("main", a, b, 0.5, 3, number=4, repeat=3)
    np.testing.assert_array_equal(b, np.full(SIZE, 3.5, dtype=np.float32))
    assert (ledger.buffers_created, ledger.live_bytes) == (made, live)
    assert ledger.set_bytes_calls == 2 * (51 + 1 + 12)  # two scalars per dispatch: calls, warm-up, timed
    assert ledger.leaked_autoreleased == 0, "command buffers and encoders need an autorelease pool"
    module.loaded.release()
    assert ledger.live_bytes == 0


def test_a_new_input_array_is_copied_into_the_same_buffer(ledger):
    module = runtime.load(WINDOW_SOURCE, [_window()], METAL)
    for seed in range(3):
        a = np.random.default_rng(seed).standard_normal(1026).astype(np.float32)
        b = np.zeros(1024, dtype=np.float32)
        module.run("window", [a, b])
        np.testing.assert_allclose(b, a[:-2] + a[1:-1] + a[2:], rtol=1e-5, atol=1e-6)
    assert ledger.buffers_created == 2


def test_compile_error_points_at_the_msl_line(ledger):
    source = WINDOW_SOURCE.replace("threadgroup_barrier", "float w = undefined_value;\n  threadgroup_barrier")
    with pytest.raises(CompileError) as error:
        runtime.load(source, [_window()], METAL)
    line = next(n for n, text in enumerate(source.splitlines(), 1) if "undefined_value" in text)
    assert error.value.tool == "Metal"
    assert error.value.lines == [line]
    assert "float w = undefined_value;" in str(error.value)


def test_pipeline_thread_limit_below_the_launch_is_a_build_error(monkeypatch):
    metal_standin.install(monkeypatch, max_threads_per_pipeline=64)
    with pytest.raises(
        BuildError, match="kernel 'window_kernel0' of 'window' needs 128 threads .* allows 64"
    ):
        runtime.load(WINDOW_SOURCE, [_window()], METAL)


def test_failed_command_buffer_raises_with_the_kernel_name(ledger, monkeypatch):
    monkeypatch.setenv("TIR_METAL_SIM_BARRIER_TIMEOUT", "0.5")
    module = runtime.load(FAULTY_SOURCE, FAULTY_FUNCTIONS, METAL)
    with pytest.raises(LaunchError, match="kernel 'partial_barrier_kernel0' of 'partial_barrier' failed on"):
        module.run("partial_barrier", [np.zeros(8, np.int32)])
