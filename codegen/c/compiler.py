"""Finding, probing and running the system C compiler for the C target, with an on-disk cache.

``codegen/c/runtime.py`` hands the module's C source to ``compile_library``,
which returns the path of a shared library built with ``-O3 -march=<arch>
-fopenmp`` (with gcc also ``-fira-region=one``: see ``GCC_FLAGS``). The
compiler is ``$CC`` or the first of cc, gcc, clang on PATH; it is probed
once per process (version, what ``-march`` turns on, whether ``-fopenmp``
works), so ``compiler_description`` can say exactly which
machine the code is compiled for. Libraries are cached under
``$TIR_CACHE_DIR/c`` (default ``~/.cache/tir/c``) by a hash of the source, the
flags, the compiler's version and the features ``-march`` enables, and appear
there only complete (written beside the final name, then renamed), so
concurrent processes never load a half-written file. ``cache_directory`` and
``atomic_output`` are shared with the nvcc cache (``codegen/cuda/nvcc.py``).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from codegen.errors import BuildError, CompileError, RuntimeUnavailableError
from codegen.target import Target

BASE_FLAGS = ("-O3", "-std=c11", "-fPIC", "-shared", "-ffp-contract=fast")
# gcc's default regional register allocator (-fira-region=mixed) spills the
# accumulators of register-tiled loops (a 5x4 tile of zmm vectors: 20
# accumulators, 4 operands, one broadcast of 32 registers) to the stack inside
# the innermost loop although registers are free; allocating the function as one
# region keeps them in registers (seed 003's conv tile: 8 stack accesses per
# iteration -> 0; without Halide's channel unroll, 17 -> 0 and 58% -> 85% of peak).
GCC_FLAGS = ("-fira-region=one",)
SOURCE_NAME = "module.c"
_OPENMP_PROBE = """void tir_probe(int n, float *a) {
#pragma omp parallel for
  for (int i = 0; i < n; ++i) a[i] = 0;
}
"""


class CompilerNotFoundError(RuntimeUnavailableError):
    """No usable C compiler: none on PATH, or ``$CC`` names something that is not there.

    A ``RuntimeUnavailableError``, so ``build`` still returns the module with its source.
    """


@dataclass(frozen=True)
class CCompiler:
    """A probed C compiler: the command, what it is, and the flags it builds the C target with."""

    command: tuple[str, ...]
    name: str
    version_text: str
    arch_flag: str
    machine: str
    machine_macros: str
    openmp: bool

    @property
    def flags(self) -> tuple[str, ...]:
        family_flags = GCC_FLAGS if self.name.startswith("gcc") else ()
        return (*BASE_FLAGS, *family_flags, self.arch_flag, *(("-fopenmp",) if self.openmp else ()))

    @property
    def description(self) -> str:
        """``"gcc 12.2.0 -O3 -march=native (x86-64, AVX2: yes, AVX-512: yes), OpenMP"``."""
        parallel = "OpenMP" if self.openmp else "no OpenMP (it rejects -fopenmp: loops run on one core)"
        return f"{self.name} -O3 {self.arch_flag} ({self.machine}), {parallel}"

    def cache_key(self, source: str) -> str:
        parts = (source, *self.command, *self.flags, self.version_text, self.machine_macros)
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def find_compiler(target: Target) -> CCompiler:
    """The compiler for ``target`` (``$CC``, else cc, gcc or clang on PATH), probed once per process."""
    return _probe(_compiler_command(), target.arch)


def compiler_description(target: Target) -> str:
    """Which compiler builds ``target`` and for which machine, e.g. ``gcc 12.2.0 -O3 -march=native (...)``."""
    return find_compiler(target).description


def compile_library(source: str, compiler: CCompiler) -> Path:
    """Path of the shared library built from ``source``; compiles only when the cache lacks it."""
    library = cache_directory("c") / f"{compiler.cache_key(source)}.so"
    if library.exists():
        return library
    with tempfile.TemporaryDirectory(prefix="tir-c-") as work, atomic_output(library) as output:
        Path(work, SOURCE_NAME).write_text(source)
        # Compiling the source as it is, under one file name, keeps the compiler's line numbers ours.
        result = _run([*compiler.command, *compiler.flags, SOURCE_NAME, "-o", str(output), "-lm"], cwd=work)
        if result.returncode != 0:
            raise CompileError("cc", result.stderr + result.stdout, source)
    return library


def cache_directory(kind: str) -> Path:
    """``$TIR_CACHE_DIR/<kind>`` (default ``~/.cache/tir/<kind>``), created if missing."""
    path = Path(os.environ.get("TIR_CACHE_DIR") or "~/.cache/tir").expanduser() / kind
    path.mkdir(parents=True, exist_ok=True)
    return path


@contextmanager
def atomic_output(final: Path) -> Iterator[Path]:
    """A temporary path beside ``final`` that is renamed onto it only if the block succeeds."""
    handle, temporary = tempfile.mkstemp(dir=final.parent, prefix=f".{final.stem}-", suffix=final.suffix)
    os.close(handle)
    try:
        yield Path(temporary)
        os.replace(temporary, final)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def _run(command: list[str], cwd: str | None = None, stdin: str | None = None) -> subprocess.CompletedProcess:
    """Every compiler process goes through here (tests count the calls)."""
    return subprocess.run(command, cwd=cwd, input=stdin, capture_output=True, text=True, check=False)


def _compiler_command() -> tuple[str, ...]:
    configured = os.environ.get("CC", "").strip()
    if configured:
        words = shlex.split(configured)
        path = shutil.which(words[0])
        if path is None:
            raise CompilerNotFoundError(
                f"no C compiler found: CC={configured!r} is not an executable on PATH; "
                "install gcc or set CC to a C compiler (e.g. CC=gcc)"
            )
        return (path, *words[1:])
    for name in ("cc", "gcc", "clang"):
        path = shutil.which(name)
        if path is not None:
            return (path,)
    raise CompilerNotFoundError(
        "no C compiler found; install gcc or set CC (looked for cc, gcc, clang on PATH)"
    )


@functools.cache
def _probe(command: tuple[str, ...], arch: str) -> CCompiler:
    try:
        version = _run([*command, "--version"])
    except OSError as error:
        raise CompilerNotFoundError(
            f"no C compiler found: {command[0]} cannot run ({error}); install gcc or set CC"
        ) from error
    version_text = version.stdout.strip()
    arch_flag, macros = _arch_flag_and_macros(command, arch, version_text)
    return CCompiler(
        command=command,
        name=_compiler_name(command, version_text),
        version_text=version_text,
        arch_flag=arch_flag,
        machine=_machine_summary(macros),
        machine_macros=macros,
        openmp=_supports_openmp(command),
    )


def _arch_flag_and_macros(command: tuple[str, ...], arch: str, version_text: str) -> tuple[str, str]:
    """The flag that selects ``arch`` and the macros it predefines; some clangs take only ``-mcpu``."""
    outputs = []
    for flag in (f"-march={arch}", f"-mcpu={arch}"):
        result = _run([*command, flag, "-dM", "-E", "-x", "c", "-"], stdin="")
        if result.returncode == 0:
            return flag, "\n".join(sorted(result.stdout.splitlines()))
        outputs.append(result.stderr.strip())
    first_line = version_text.splitlines()[0] if version_text else command[0]
    raise BuildError(
        f"the C compiler ({first_line}) rejects -march={arch} and -mcpu={arch}: {outputs[0]}\n"
        f"Use an architecture it knows, e.g. target 'c -march=x86-64-v3', or the default 'c' (native)."
    )


def _compiler_name(command: tuple[str, ...], version_text: str) -> str:
    text = version_text.lower()
    if "clang" in text:
        family = "Apple clang" if "apple" in text else "clang"
    elif "gcc" in text or "free software foundation" in text:
        family = "gcc"
    else:
        family = Path(command[0]).name
    number = re.search(r"\d+\.\d+(?:\.\d+)?", version_text)
    return f"{family} {number.group()}" if number else family


def _machine_summary(macros: str) -> str:
    """What the flags compile for, e.g. ``x86-64, AVX2: yes, AVX-512: no``, from the predefined macros."""
    defined = {line.split()[1] for line in macros.splitlines() if line.startswith("#define ")}

    def has(macro: str) -> str:
        return "yes" if macro in defined else "no"

    if "__x86_64__" in defined:
        return f"x86-64, AVX2: {has('__AVX2__')}, AVX-512: {has('__AVX512F__')}"
    if "__aarch64__" in defined:
        return f"arm64, NEON: {has('__ARM_NEON')}, SVE: {has('__ARM_FEATURE_SVE')}"
    return "unknown machine"


def _supports_openmp(command: tuple[str, ...]) -> bool:
    """Whether ``-fopenmp`` compiles and links (Apple's clang without libomp rejects it)."""
    with tempfile.TemporaryDirectory(prefix="tir-cc-probe-") as work:
        Path(work, "probe.c").write_text(_OPENMP_PROBE)
        result = _run([*command, *BASE_FLAGS, "-fopenmp", "probe.c", "-o", "probe.so"], cwd=work)
    return result.returncode == 0
