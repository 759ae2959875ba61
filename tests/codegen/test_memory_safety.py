"""Memory safety (issue 19): no kernel reads or writes outside its buffers, no dead Python process.

The three corpus mutants (tests/fixtures/mutants.py) first: the loop that runs
past its iterator's domain and the loop variable inside a block body are
ParseErrors with a caret (and a WellFormedError at ``Schedule(...)`` or a
BuildError when built in Python), and the empty loop builds and runs on every
path. Then the bounds prover (a provably out-of-bounds access is a BuildError
naming buffer, index, range and shape; a gather is left alone), checked builds
on C and the Metal simulator (a bad gather index and a zero divisor raise,
naming kernel, buffer and index; good inputs give numpy's numbers), internal
errors turned into BuildErrors, and crash tests in a child process that must
end with a clean exception, never a signal.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import tir
from codegen import BuildError, build
from codegen.build import generate_source
from codegen.cuda.nvcc import compile_with_nvcc, nvcc_available
from codegen.errors import BoundsCheckError, DivisionCheckError, LaunchError
from schedule import Schedule
from tests.fixtures.mutants import EMPTY_LOOP, LOOP_PAST_DOMAIN, LOOP_VAR_IN_BODY, ill_formed_func
from tir import T
from tir.analysis.well_formed import WellFormedError
from tir.script.errors import ParseError

ROOT = Path(__file__).resolve().parents[2]
PATHS = [("c", None), ("metal", "sim")]


@T.prim_func
def gather_divide(
    A: T.Buffer((64,), "float32"),
    I: T.Buffer((32,), "int32"),
    D: T.Buffer((32,), "int32"),
    B: T.Buffer((32,), "float32"),
):
    for i in range(32):
        with T.block("B"):
            vi = T.axis.spatial(32, i)
            B[vi] = A[I[vi]] + T.Cast("float32", 100 // D[vi])


@T.prim_func
def shifted_write(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i in range(64):
        with T.block("B"):
            vi = T.axis.spatial(64, i)
            B[vi + 1] = A[vi]


@T.prim_func
def guarded_shift(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i in range(64):
        with T.block("B"):
            vi = T.axis.spatial(64, i)
            T.where(i < 63)
            B[vi + 1] = A[vi]


def gather_inputs(rng: np.random.Generator):
    a = rng.uniform(-1, 1, 64).astype("float32")
    idx = rng.integers(0, 64, 32).astype("int32")
    div = rng.integers(1, 9, 32).astype("int32")
    return a, idx, div, np.full(32, 1e3, "float32")


# ---------------------------------------------------------------- 1. well-formedness


def test_loop_past_the_iterator_domain_is_a_parse_error_with_a_caret():
    with pytest.raises(
        ParseError, match=r"iterator vi has domain \[0, 64\) .* ranges over \[0, 603\]"
    ) as info:
        tir.parse(LOOP_PAST_DOMAIN)
    assert info.value.lineno == 6 and "^^^" in str(info.value)
    assert "T.axis.spatial(64, i)" in str(info.value)


def test_loop_variable_in_a_block_body_is_a_parse_error_with_a_caret():
    with pytest.raises(ParseError, match="uses loop variable i in its body") as info:
        tir.parse(LOOP_VAR_IN_BODY)
    assert info.value.lineno == 10
    assert info.value.text.strip() == "B[vi] = B[vi] + A[i, vk]"


def test_guarded_binding_and_loop_variables_in_bindings_still_parse():
    func = tir.parse(
        """
@T.prim_func
def main(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
    for i0, i1 in T.grid(3, 4):
        with T.block("B"):
            vi = T.axis.spatial(10, i0 * 4 + i1)
            T.where(i0 * 4 + i1 < 10)
            B[vi] = A[vi]
"""
    )
    a = np.random.default_rng(0).uniform(-1, 1, 10).astype("float32")
    b = np.zeros(10, "float32")
    tir.interpret(func, a, b)
    np.testing.assert_array_equal(b, a)


def test_schedule_refuses_an_ill_formed_program_built_in_python():
    with pytest.raises(WellFormedError, match=r"iterator vi has domain \[0, 64\)") as info:
        Schedule(ill_formed_func())
    assert "^^^" in str(info.value) and 'with T.block("C")' in str(info.value)


def test_build_refuses_an_ill_formed_program_built_in_python():
    with pytest.raises(BuildError, match="not well formed"):
        build(ill_formed_func(), "c")


# ---------------------------------------------------------------- 2. bounds proved at build


@pytest.mark.parametrize("target", ["c", "metal", "cuda"])
def test_provably_out_of_bounds_access_is_a_build_error(target):
    with pytest.raises(BuildError) as info:
        generate_source(shifted_write, target)
    message = str(info.value)
    assert "writes B[vi + 1]" in message and "[1, 64]" in message and "shape (64,)" in message


def test_guarded_and_data_dependent_accesses_are_left_alone():
    rng = np.random.default_rng(1)
    a, idx, div, b = gather_inputs(rng)
    build(gather_divide, "c")["gather_divide"](a, idx, div, b)
    np.testing.assert_allclose(b, a[idx] + 100 // div, rtol=1e-6)
    a, b = rng.uniform(-1, 1, 64).astype("float32"), rng.uniform(-1, 1, 64).astype("float32")
    expected = b.copy()
    expected[1:] = a[:63]
    build(guarded_shift, "c")["guarded_shift"](a, b)
    np.testing.assert_array_equal(b, expected)


def test_normal_builds_have_no_checks():
    source, (function,) = generate_source(gather_divide, "c")
    assert "tir_check" not in source and not function.checks


# ---------------------------------------------------------------- 3. checked builds


@pytest.mark.parametrize("target, device", PATHS)
def test_checked_build_computes_the_same_numbers(target, device):
    rng = np.random.default_rng(2)
    a, idx, div, b = gather_inputs(rng)
    module = build(gather_divide, target, device=device, check_bounds=True)
    module["gather_divide"](a, idx, div, b)
    np.testing.assert_allclose(b, a[idx] + 100 // div, rtol=1e-6)


@pytest.mark.parametrize("target, device", PATHS)
def test_checked_build_names_kernel_buffer_and_index(target, device):
    rng = np.random.default_rng(3)
    a, idx, div, b = gather_inputs(rng)
    idx[rng.integers(0, 32)] = 640
    module = build(gather_divide, target, device=device, check_bounds=True)
    with pytest.raises(BoundsCheckError, match=r"index 640 of A\[.*\] is outside buffer A") as info:
        module["gather_divide"](a, idx, div, b)
    kernel = "tir_gather_divide" if target == "c" else "gather_divide_kernel0"
    assert f"kernel {kernel}" in str(info.value)
    assert isinstance(info.value, IndexError) and isinstance(info.value, LaunchError)


@pytest.mark.parametrize("target, device", PATHS)
def test_checked_build_catches_division_by_zero(target, device):
    rng = np.random.default_rng(4)
    a, idx, div, b = gather_inputs(rng)
    div[7] = 0
    module = build(gather_divide, target, device=device, check_bounds=True)
    with pytest.raises(DivisionCheckError, match="integer division by zero in 100 // D"):
        module["gather_divide"](a, idx, div, b)
    with pytest.raises(ZeroDivisionError):
        tir.interpret(gather_divide, a, idx, div, b)


def test_checked_build_takes_the_same_arguments_and_times():
    rng = np.random.default_rng(5)
    module = build(gather_divide, "c", check_bounds=True)
    args = gather_inputs(rng)
    with pytest.raises(TypeError, match="takes 4 arrays"):
        module["gather_divide"](*args[:3])
    assert module.benchmark("gather_divide", *args, number=2, repeat=2).seconds > 0
    args[1][0] = -1
    with pytest.raises(BoundsCheckError, match="index -1"):
        module.benchmark("gather_divide", *args, number=1, repeat=1)


@pytest.mark.skipif(not nvcc_available(), reason="needs nvcc")
def test_checked_cuda_source_compiles_with_nvcc():

    source, (function,) = generate_source(gather_divide, "cuda", check_bounds=True)
    assert "tir_check_index" in source and function.params[-1].name == "tir_check_state"
    compile_with_nvcc(source)


# ---------------------------------------------------------------- 4. no internal exceptions from build


@pytest.mark.parametrize("target, device", PATHS)
def test_empty_loop_builds_and_runs_on_every_path(target, device):
    func = tir.parse(EMPTY_LOOP)
    a = np.random.default_rng(6).uniform(-1, 1, 64).astype("float32")
    b, expected = np.full(64, 7.0, "float32"), np.full(64, 7.0, "float32")
    tir.interpret(func, a, expected)
    build(func, target, device=device)["add_one"](a, b)
    np.testing.assert_array_equal(b, expected)


def test_internal_error_of_a_pass_is_a_build_error(monkeypatch):
    import codegen.pipeline as pipeline

    def broken(func):
        return 1 // 0

    monkeypatch.setattr(pipeline, "unroll_loop", broken)
    with pytest.raises(BuildError, match=r"internal error of the code generator \(ZeroDivisionError"):
        generate_source(gather_divide, "c")


# ---------------------------------------------------------------- crash tests in a child process


def run_child(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("target, device", PATHS)
def test_wild_gather_index_ends_in_a_clean_exception_not_a_signal(target, device):
    done = run_child(
        f"""
        import numpy as np
        from codegen import build
        from codegen.errors import BoundsCheckError
        from tests.codegen.test_memory_safety import gather_divide, gather_inputs
        args = gather_inputs(np.random.default_rng(7))
        args[1][3] = 1_000_000_000  # far outside any mapping: a plain build would fault
        module = build(gather_divide, {target!r}, device={device!r}, check_bounds=True)
        try:
            module["gather_divide"](*args)
        except BoundsCheckError as error:
            print("clean:", error)
        """
    )
    assert done.returncode == 0, f"child ended with {done.returncode}: {done.stderr[-2000:]}"
    assert "clean: kernel" in done.stdout and "index 1000000000" in done.stdout


def test_ill_formed_mutant_ends_in_a_clean_exception_not_a_signal():
    done = run_child(
        """
        import numpy as np
        from codegen import BuildError, build
        from tests.fixtures.mutants import ill_formed_func
        try:
            build(ill_formed_func(), "c")
        except BuildError as error:
            print("clean:", type(error).__name__)
        """
    )
    assert done.returncode == 0, f"child ended with {done.returncode}: {done.stderr[-2000:]}"
    assert "clean: BuildError" in done.stdout


# ---------------------------------------------------------------- CUDA, on the GPU (pytest -m gpu)


@pytest.mark.gpu
def test_checked_cuda_build_reads_the_device_flag_back():
    from codegen import RuntimeUnavailableError

    module = build(gather_divide, "cuda", check_bounds=True)
    try:
        module.loaded  # noqa: B018
    except RuntimeUnavailableError as error:
        pytest.skip(f"no CUDA runtime here: {error}")
    rng = np.random.default_rng(8)
    a, idx, div, b = gather_inputs(rng)
    module["gather_divide"](a, idx, div, b)
    np.testing.assert_allclose(b, a[idx] + 100 // div, rtol=1e-6)
    idx[9] = 1_000_000_000
    with pytest.raises(BoundsCheckError, match=r"kernel gather_divide_kernel0 .*index 1000000000"):
        module["gather_divide"](a, idx, div, b)
    idx[9], div[4] = 0, 0
    with pytest.raises(DivisionCheckError):
        module["gather_divide"](a, idx, div, b)
    module["gather_divide"](a, idx, np.maximum(div, 1), b)  # the module still runs after a failed check
