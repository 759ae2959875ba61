"""Targets and the limits a kernel must respect on them.

A target is named by a short string, as in TVM: ``"c"`` (the CPU through the
system C compiler; the default everywhere), ``"cuda"`` (NVIDIA GPUs, sm_90 by
default) and ``"metal"`` (Apple GPUs). Options follow the name:
``"c -march=x86-64-v3"``, ``"cuda -arch=sm_80"``, ``"metal -fast-math"`` (Metal's
fast math, off by default so GPU numerics follow IEEE like numpy, C and the
simulator). Each target carries the limits
that ``build`` checks before any compiler runs (threads per threadgroup,
threadgroup/shared memory, dtypes it has), so a kernel over a limit fails with a
message that names the limit and the kernel.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field, replace

KINDS = ("c", "cuda", "metal")
ALIASES = {"llvm": "c", "cpu": "c", "gpu": "cuda", "nvidia": "cuda", "apple": "metal", "mps": "metal"}


class TargetError(ValueError):
    """An unknown target name or option."""


@dataclass(frozen=True)
class Target:
    """A code generation target with its limits.

    ``kind``: "c", "cuda" or "metal". ``arch``: the machine the code is compiled
    for ("native" for C unless told otherwise, "sm_90" for CUDA, "apple" for
    Metal). ``max_threads_per_group`` and ``max_shared_memory_bytes`` bound
    each GPU kernel; ``warp_size`` is the SIMD width; ``vector_bytes`` the
    widest vector load the printers emit. ``dtypes`` lists the element types the
    target has.
    """

    kind: str
    arch: str
    max_threads_per_group: int
    max_shared_memory_bytes: int
    warp_size: int
    vector_bytes: int
    dtypes: frozenset[str]
    options: tuple[str, ...] = field(default=())

    @property
    def fast_math(self) -> bool:
        """``-fast-math``: the compiler may reassociate and assume no NaN or infinity (Metal only)."""
        return "-fast-math" in self.options

    @property
    def is_gpu(self) -> bool:
        return self.kind in ("cuda", "metal")

    def __str__(self) -> str:
        return " ".join((self.kind, *self.options))

    @staticmethod
    def parse(spec: str | Target) -> Target:
        """``Target.parse("cuda -arch=sm_80")``; a Target is returned unchanged."""
        if isinstance(spec, Target):
            return spec
        words = shlex.split(spec) if isinstance(spec, str) else []
        if not words:
            raise TargetError(f"empty or invalid target {spec!r}; expected one of {', '.join(KINDS)}")
        kind = ALIASES.get(words[0].lower(), words[0].lower())
        if kind not in KINDS:
            raise TargetError(
                f"unknown target {words[0]!r}; expected one of {', '.join(KINDS)} (e.g. 'cuda')"
            )
        target = _DEFAULTS[kind]
        for option in words[1:]:
            target = _apply_option(target, option)
        return target


_COMMON_DTYPES = frozenset(
    {"float32", "float16", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "bool"}
)

_DEFAULTS = {
    "c": Target(
        kind="c",
        arch="native",
        max_threads_per_group=1 << 30,
        max_shared_memory_bytes=8 << 20,
        warp_size=1,
        vector_bytes=64,
        dtypes=_COMMON_DTYPES | {"float64", "uint64"},
    ),
    "cuda": Target(
        kind="cuda",
        arch="sm_90",
        max_threads_per_group=1024,
        max_shared_memory_bytes=48 * 1024,
        warp_size=32,
        vector_bytes=16,
        dtypes=_COMMON_DTYPES | {"float64", "uint64"},
    ),
    "metal": Target(
        kind="metal",
        arch="apple",
        max_threads_per_group=1024,
        max_shared_memory_bytes=32 * 1024,
        warp_size=32,
        vector_bytes=16,
        dtypes=_COMMON_DTYPES | {"uint64"},
    ),
}

_OPTION_FIELDS = {"-arch": "arch", "-march": "arch", "-mcpu": "arch"}


def _apply_option(target: Target, option: str) -> Target:
    if option == "-fast-math":
        if target.kind != "metal":
            raise TargetError(f"-fast-math is a Metal option; target {target.kind!r} does not take it")
        return target if target.fast_math else replace(target, options=(*target.options, option))
    name, _, value = option.partition("=")
    if name not in _OPTION_FIELDS or not value:
        known = ", ".join([*(f"{k}=..." for k in _OPTION_FIELDS), "-fast-math (metal)"])
        raise TargetError(f"unknown option {option!r} for target {target.kind!r}; known: {known}")
    return replace(target, **{_OPTION_FIELDS[name]: value}, options=(*target.options, option))


def default_target() -> Target:
    """The target ``build`` and the tuner use when none is given: C (``TIR_TARGET`` overrides)."""
    return Target.parse(os.environ.get("TIR_TARGET", "c"))
