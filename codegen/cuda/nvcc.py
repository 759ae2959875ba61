"""Compile CUDA source to a cubin with nvcc, to prove it builds on machines that have nvcc and no GPU.

The CUDA runtime (``codegen/cuda/runtime.py``) compiles through NVRTC, which
needs a GPU and CuPy; this module only needs the CUDA toolkit. It runs
``nvcc -arch=<arch> -cubin`` (or ``-ptx``, for ``Module.export``) on the exact
source (so nvcc's line numbers are the source's) in a temporary folder and caches the cubin under
``$TIR_CACHE_DIR/nvcc`` by a hash of the source, the flags and nvcc's version.
The tuner's build workers use it to compile CUDA candidates in parallel: the
runner then loads the cached cubin (``cached_cubin``) instead of calling NVRTC.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from codegen.c.compiler import atomic_output, cache_directory
from codegen.errors import CompileError

FLAGS = ("-std=c++17",)
OUTPUTS = ("cubin", "ptx")
SOURCE_NAME = "kernel.cu"


def nvcc_path() -> str | None:
    """nvcc on PATH, else in ``$CUDA_HOME``/``$CUDA_PATH``/``/usr/local/cuda``; None if there is none."""
    found = shutil.which("nvcc")
    if found is not None:
        return found
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and os.access(Path(root, "bin", "nvcc"), os.X_OK):
            return str(Path(root, "bin", "nvcc"))
    return None


def nvcc_available() -> bool:
    return nvcc_path() is not None


def compile_with_nvcc(source: str, arch: str = "sm_90", output: str = "cubin") -> bytes:
    """The cubin (or, ``output="ptx"``, the PTX text) nvcc builds from ``source`` for ``arch``;
    raises CompileError with nvcc's output."""
    if output not in OUTPUTS:
        raise ValueError(f"nvcc output must be one of {', '.join(OUTPUTS)}; got {output!r}")
    nvcc = nvcc_path()
    if nvcc is None:
        raise FileNotFoundError("nvcc not found: install the CUDA toolkit or put its bin folder on PATH")
    built = _cached_path(nvcc, source, arch, output)
    if not built.exists():
        _compile(nvcc, _flags(arch, output), source, built)
    return built.read_bytes()


def cached_cubin(source: str, arch: str) -> Path | None:
    """The cubin ``compile_with_nvcc(source, arch)`` left in the cache, or None; never compiles.

    The tuner's build workers compile each CUDA candidate with nvcc, in parallel
    (``codegen.cuda.BACKEND.precompile``); the runner then loads that cubin instead of
    compiling the same source again with NVRTC, one candidate after the other.
    """
    nvcc = nvcc_path()
    if nvcc is None:
        return None
    built = _cached_path(nvcc, source, arch, "cubin")
    return built if built.exists() else None


def _flags(arch: str, output: str) -> tuple[str, ...]:
    return (f"-arch={arch}", f"-{output}", *FLAGS)


def _cached_path(nvcc: str, source: str, arch: str, output: str) -> Path:
    """Where the output lies once built: a hash of the source, the flags and nvcc's version."""
    text = "\0".join((source, *_flags(arch, output), _version(nvcc)))
    return cache_directory("nvcc") / f"{hashlib.sha256(text.encode()).hexdigest()}.{output}"


def _compile(nvcc: str, flags: tuple[str, ...], source: str, cubin: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="tir-nvcc-") as work, atomic_output(cubin) as output:
        Path(work, SOURCE_NAME).write_text(source)
        result = _run([nvcc, *flags, "-o", str(output), SOURCE_NAME], cwd=work)
        if result.returncode != 0:
            raise CompileError("nvcc", result.stdout + result.stderr, source)


@functools.cache
def _version(nvcc: str) -> str:
    return _run([nvcc, "--version"]).stdout.strip()


def _run(command: list[str], cwd: str | None = None) -> subprocess.CompletedProcess:
    """Every nvcc process goes through here (tests count the calls)."""
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
