"""The CUDA runtime and the nvcc compile check on hand-written kernels in the printer's convention.

nvcc tests run wherever nvcc is installed (no GPU needed); tests marked ``gpu``
need CuPy and an NVIDIA GPU and skip elsewhere.
"""

from __future__ import annotations

import sys
from types import SimpleNamespace

import numpy as np
import pytest

from codegen.cuda import nvcc
from codegen.cuda.runtime import CudaModule, CudaUnavailableError, _arch_for, load
from codegen.errors import BuildError, CompileError, LaunchError
from codegen.program import BufferSpec, CompiledFunction, KernelLaunch
from codegen.target import Target
from tuner import workloads
from tuner.measure.builder import BuildTask, build_candidate
from tuner.space import SpaceGenerator

# B[i] = A[i] + A[i + 1] + A[i + 2] for i < 1024; each block stages its 130 inputs in shared memory.
WINDOW_SOURCE = """extern "C" __global__ void __launch_bounds__(128)
window_kernel0(float* __restrict__ A, float* __restrict__ B) {
  __shared__ __align__(16) float A_shared[130];
  for (int ax0_0 = 0; ax0_0 < 2; ++ax0_0) {
    int j = ax0_0 * 128 + (int)threadIdx.x;
    if (j < 130) {
      A_shared[j] = A[(int)blockIdx.x * 128 + j];
    }
  }
  __syncthreads();
  int t = (int)threadIdx.x;
  B[(int)blockIdx.x * 128 + t] = A_shared[t] + A_shared[t + 1] + A_shared[t + 2];
}
"""


def _window(block: tuple[int, int, int] = (128, 1, 1)) -> CompiledFunction:
    return CompiledFunction(
        name="window",
        params=(BufferSpec("A", "float32", (1026,), written=False), BufferSpec("B", "float32", (1024,))),
        flops=2048,
        launches=(KernelLaunch("window_kernel0", (8, 1, 1), block, ("A", "B"), shared_bytes=520),),
    )


# D = relu(A @ B) for 128x128 matrices: a 16x16-tiled matmul into the workspace C, then a relu kernel.
MATMUL_RELU_SOURCE = """__device__ __forceinline__ float4 operator*(float4 a, float4 b) {
  return make_float4(a.x * b.x, a.y * b.y, a.z * b.z, a.w * b.w);
}
extern "C" __global__ void __launch_bounds__(256)
mm_kernel0(float* __restrict__ A, float* __restrict__ B, float* __restrict__ C) {
  __shared__ float A_shared[256];
  __shared__ float B_shared[256];
  const int tx = (int)threadIdx.x, ty = (int)threadIdx.y, bx = (int)blockIdx.x, by = (int)blockIdx.y;
  float acc = 0.000000e+00f;
  for (int k_0 = 0; k_0 < 8; ++k_0) {
    A_shared[ty * 16 + tx] = A[(by * 16 + ty) * 128 + k_0 * 16 + tx];
    B_shared[ty * 16 + tx] = B[(k_0 * 16 + ty) * 128 + bx * 16 + tx];
    __syncthreads();
    for (int k_1 = 0; k_1 < 16; ++k_1) {
      acc = acc + A_shared[ty * 16 + k_1] * B_shared[k_1 * 16 + tx];
    }
    __syncthreads();
  }
  C[(by * 16 + ty) * 128 + bx * 16 + tx] = acc;
}

extern "C" __global__ void __launch_bounds__(128) mm_kernel1(float* __restrict__ C, float* __restrict__ D) {
  float4 v = *(float4*)(C + ((int)blockIdx.x * 512 + (int)threadIdx.x * 4));
  float4 positive = make_float4(v.x > 0.0f, v.y > 0.0f, v.z > 0.0f, v.w > 0.0f);
  *(float4*)(D + ((int)blockIdx.x * 512 + (int)threadIdx.x * 4)) = v * positive;
}
"""

MATMUL_RELU = CompiledFunction(
    name="matmul_relu",
    params=(
        BufferSpec("A", "float32", (128, 128), written=False),
        BufferSpec("B", "float32", (128, 128), written=False),
        BufferSpec("D", "float32", (128, 128)),
    ),
    flops=2 * 128**3,
    launches=(
        KernelLaunch("mm_kernel0", (8, 8, 1), (16, 16, 1), ("A", "B", "C"), shared_bytes=2048),
        KernelLaunch("mm_kernel1", (32, 1, 1), (128, 1, 1), ("C", "D")),
    ),
    workspaces=(BufferSpec("C", "float32", (128, 128)),),
)


def _gpu_ready() -> bool:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


requires_gpu = pytest.mark.skipif(not _gpu_ready(), reason="needs CuPy and an NVIDIA GPU")
requires_nvcc = pytest.mark.skipif(not nvcc.nvcc_available(), reason="needs nvcc (the CUDA toolkit)")
CUDA = Target.parse("cuda")


def _random(shape, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _error_line(source: str, needle: str) -> int:
    return next(number for number, line in enumerate(source.splitlines(), 1) if needle in line)


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TIR_CACHE_DIR", str(tmp_path / "cache"))


# ---------------------------------------------------------------- without a GPU


def test_missing_cupy_says_which_wheel(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)
    with pytest.raises(CudaUnavailableError, match="cupy-cuda13x") as error:
        load(WINDOW_SOURCE, [_window()], CUDA)
    assert isinstance(error.value, ImportError)


def test_architecture_follows_the_gpu_unless_the_target_names_one():
    assert _arch_for(CUDA, "sm_80", "NVIDIA A100") == "sm_80"
    assert _arch_for(Target.parse("cuda -arch=sm_80"), "sm_80", "NVIDIA A100") == "sm_80"
    with pytest.raises(BuildError, match="asks for sm_90, but this GPU .* is sm_80"):
        _arch_for(Target.parse("cuda -arch=sm_90"), "sm_80", "NVIDIA A100")


@requires_nvcc
def test_nvcc_compiles_to_a_cubin_once(monkeypatch):
    calls = []
    real_run = nvcc._run

    def counting_run(command, *args, **kwargs):
        if nvcc.SOURCE_NAME in command:
            calls.append(command)
        return real_run(command, *args, **kwargs)

    monkeypatch.setattr(nvcc, "_run", counting_run)
    cubin = nvcc.compile_with_nvcc(MATMUL_RELU_SOURCE, "sm_90")
    assert cubin[:4] == b"\x7fELF"
    assert b"mm_kernel0" in cubin and b"mm_kernel1" in cubin
    assert nvcc.compile_with_nvcc(MATMUL_RELU_SOURCE, "sm_90") == cubin
    assert len(calls) == 1
    nvcc.compile_with_nvcc(MATMUL_RELU_SOURCE, "sm_80")
    assert len(calls) == 2


@requires_nvcc
def test_nvcc_error_points_at_the_source_line():
    source = WINDOW_SOURCE.replace("__syncthreads();", "__syncthreads();\n  float w = undefined_value;")
    with pytest.raises(CompileError) as error:
        nvcc.compile_with_nvcc(source)
    line = _error_line(source, "undefined_value")
    assert error.value.tool == "nvcc"
    assert error.value.lines == [line]
    assert f"generated source line {line}: float w = undefined_value;" in str(error.value)


def _scheduled():
    """A CUDA candidate of the tuner's space (its printed source is replaced in these tests)."""
    return SpaceGenerator("cuda").sample(workloads.make("matmul", "64,64,64"), seed=0).mod


def _fake_cupy(refuse_cubins: bool = False):
    """Just enough of CuPy for CudaModule to choose how its kernels are built: an sm_90 GPU whose
    RawModule records what it was made from (``path`` for a cubin, ``code`` for NVRTC)."""
    driver_error = type("CUDADriverError", (Exception,), {})
    made = []

    class RawModule:
        def __init__(self, code=None, *, path=None, options=()):
            if path is not None and refuse_cubins:
                raise driver_error("CUDA_ERROR_UNSUPPORTED_PTX_VERSION")
            made.append({"code": code, "path": path, "options": options})

        def get_function(self, name):
            return SimpleNamespace(name=name)

    cuda = SimpleNamespace(
        Device=lambda: SimpleNamespace(id=0, compute_capability="90"),
        runtime=SimpleNamespace(getDeviceProperties=lambda _: {"name": b"Fake H200"}),
        driver=SimpleNamespace(CUDADriverError=driver_error),
        compiler=SimpleNamespace(CompileException=type("CompileException", (Exception,), {})),
    )
    return SimpleNamespace(cuda=cuda, RawModule=RawModule), made


@requires_nvcc
def test_a_cubin_the_build_workers_left_is_loaded_instead_of_compiling_again():
    """The tuner's build workers compile a CUDA candidate with nvcc (its backend's precompile):
    the runtime then loads that cubin; without it, or where the driver refuses it, NVRTC compiles."""
    cupy, made = _fake_cupy()
    assert CudaModule(cupy, MATMUL_RELU_SOURCE, [MATMUL_RELU], CUDA).compiler == "nvrtc"
    assert made[-1]["code"] == MATMUL_RELU_SOURCE and made[-1]["path"] is None
    outcome = build_candidate(BuildTask(_scheduled(), "cuda", source_override=MATMUL_RELU_SOURCE))
    assert outcome.status == "built"
    cubin = nvcc.cached_cubin(MATMUL_RELU_SOURCE, "sm_90")
    assert cubin is not None and cubin.read_bytes() == nvcc.compile_with_nvcc(MATMUL_RELU_SOURCE, "sm_90")
    module = CudaModule(cupy, MATMUL_RELU_SOURCE, [MATMUL_RELU], CUDA)
    assert module.compiler == "nvcc" and made[-1]["path"] == str(cubin)
    assert sorted(module._kernels) == ["mm_kernel0", "mm_kernel1"]
    assert nvcc.cached_cubin(MATMUL_RELU_SOURCE, "sm_80") is None  # another GPU: NVRTC compiles
    refusing, made = _fake_cupy(refuse_cubins=True)
    assert CudaModule(refusing, MATMUL_RELU_SOURCE, [MATMUL_RELU], CUDA).compiler == "nvrtc"
    assert made[-1]["code"] == MATMUL_RELU_SOURCE


@requires_nvcc
def test_a_source_nvcc_rejects_is_left_to_nvrtc():
    """The cubin is only a head start: a source nvcc rejects still counts as built, so that the
    error the tuner records is NVRTC's, from the runner, as without nvcc."""
    outcome = build_candidate(BuildTask(_scheduled(), "cuda", source_override="not CUDA"))
    assert outcome.status == "built" and outcome.source == "not CUDA"
    assert nvcc.cached_cubin("not CUDA", "sm_90") is None


# ---------------------------------------------------------------- on a GPU


@pytest.mark.gpu
@requires_gpu
def test_window_sum_with_shared_memory():
    module = load(WINDOW_SOURCE, [_window()], CUDA)
    a = _random(1026, 0)
    b = np.full(1024, np.nan, dtype=np.float32)
    module.run("window", [a, b])
    np.testing.assert_allclose(b, a[:-2] + a[1:-1] + a[2:], rtol=1e-5, atol=1e-6)
    assert "NVIDIA" in module.device_name
    assert module.arch.startswith("sm_")


@pytest.mark.gpu
@requires_gpu
def test_matmul_then_relu_through_a_workspace():
    module = load(MATMUL_RELU_SOURCE, [MATMUL_RELU], CUDA)
    a, b = _random((128, 128), 1), _random((128, 128), 2)
    d_storage = np.zeros((128, 256), dtype=np.float32)
    d = d_storage[:, ::2]  # not contiguous: copied to the GPU and back
    module.run("matmul_relu", [a, b, d])
    np.testing.assert_allclose(d, np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)
    assert not d_storage[:, 1::2].any()


@pytest.mark.gpu
@requires_gpu
def test_cupy_arrays_are_used_in_place():
    import cupy

    module = load(WINDOW_SOURCE, [_window()], CUDA)
    a = _random(1026, 3)
    a_device, b_device = cupy.asarray(a), cupy.zeros(1024, dtype=cupy.float32)
    module.run("window", [a_device, b_device])
    np.testing.assert_allclose(cupy.asnumpy(b_device), a[:-2] + a[1:-1] + a[2:], rtol=1e-5, atol=1e-6)


@pytest.mark.gpu
@requires_gpu
def test_time_returns_positive_seconds():
    module = load(MATMUL_RELU_SOURCE, [MATMUL_RELU], CUDA)
    a, b = _random((128, 128), 4), _random((128, 128), 5)
    d = np.zeros((128, 128), dtype=np.float32)
    times = module.time("matmul_relu", [a, b, d], number=5, repeat=3)
    assert len(times) == 3
    assert all(isinstance(t, float) and 0 < t < 0.1 for t in times)
    np.testing.assert_allclose(d, np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)


@pytest.mark.gpu
@requires_gpu
def test_nvrtc_error_points_at_the_source_line():
    source = WINDOW_SOURCE.replace("__syncthreads();", "__syncthreads();\n  float w = undefined_value;")
    with pytest.raises(CompileError) as error:
        load(source, [_window()], CUDA)
    line = _error_line(source, "undefined_value")
    assert error.value.tool == "NVRTC"
    assert error.value.lines == [line]


@pytest.mark.gpu
@requires_gpu
def test_bad_launch_names_the_kernel():
    module = load(WINDOW_SOURCE, [_window(block=(2048, 1, 1))], CUDA)
    a, b = _random(1026, 6), np.zeros(1024, dtype=np.float32)
    with pytest.raises(LaunchError, match="kernel 'window_kernel0' of 'window' did not launch"):
        module.run("window", [a, b])


@pytest.mark.gpu
@requires_gpu
def test_target_naming_another_gpu_is_refused():
    import cupy

    other = "sm_52" if cupy.cuda.Device().compute_capability != "52" else "sm_60"
    with pytest.raises(BuildError, match=f"asks for {other}"):
        load(WINDOW_SOURCE, [_window()], Target.parse(f"cuda -arch={other}"))


def test_wmma_sources_also_search_the_toolkit_headers(tmp_path, monkeypatch):
    # pip's CUDA headers (CuPy's include path) have mma.h but not the crt/mma.h it includes.
    from codegen.cuda.runtime import NVRTC_OPTIONS, nvrtc_options

    (tmp_path / "include" / "crt").mkdir(parents=True)
    (tmp_path / "include" / "crt" / "mma.h").write_text("")
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    assert nvrtc_options("#include <mma.h>\n__global__ void k() {}") == (
        *NVRTC_OPTIONS,
        f"-I{tmp_path / 'include'}",
    )
    assert nvrtc_options("__global__ void k() {}") == NVRTC_OPTIONS
