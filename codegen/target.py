"""Targets and the limits a kernel must respect on them.

A target is named by a short string, as in TVM: ``"c"`` (the CPU through the
system C compiler; the default everywhere), ``"cuda"`` (NVIDIA GPUs, sm_90 by
default) and ``"metal"`` (Apple GPUs). Options follow the name:
``"c -march=x86-64-v3"``, ``"cuda -arch=sm_80"``, ``"metal -fast-math"`` (Metal's
fast math, off by default so GPU numerics follow IEEE like numpy, C and the
simulator). The kinds, their aliases and default limits come from the backend
records (codegen/registry.py). Each target carries the limits that ``build``
checks before any compiler runs (threads per threadgroup,
threadgroup/shared memory, dtypes it has), so a kernel over a limit fails with a
message that names the limit and the kernel.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field, replace
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .backend import Backend


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
    def backend(self) -> Backend:
        """The record of this target's printer, runtimes and devices (codegen/backend.py)."""
        return _registry().backend_for(self.kind)

    @property
    def fast_math(self) -> bool:
        """``-fast-math``: the compiler may reassociate and assume no NaN or infinity (Metal only)."""
        return "-fast-math" in self.options

    @property
    def has_async_copy(self) -> bool:
        """Whether kernels can copy global to shared memory asynchronously (the backend's
        ``async_copy_arch``: CUDA's cp.async from sm_80), used by software pipelines."""
        first = self.backend.async_copy_arch
        digits = "".join(c for c in self.arch.partition("_")[2] if c.isdigit())
        return first is not None and digits != "" and int(digits) >= first

    @property
    def max_opt_in_shared_memory_bytes(self) -> int:
        """Shared memory one kernel may declare: ``max_shared_memory_bytes`` (static), or more where the
        backend lets a kernel opt in at launch (CUDA: dynamic shared memory, 227 KB on sm_90)."""
        opt_in = self.backend.opt_in_shared_bytes
        return max(self.max_shared_memory_bytes, opt_in(self.arch) if opt_in is not None else 0)

    @property
    def is_gpu(self) -> bool:
        """Whether functions become kernel launches (the backend record says)."""
        return self.backend.is_gpu

    def __str__(self) -> str:
        return " ".join((self.kind, *self.options))

    @staticmethod
    def parse(spec: str | Target) -> Target:
        """``Target.parse("cuda -arch=sm_80")``; a Target is returned unchanged."""
        if isinstance(spec, Target):
            return spec
        registry = _registry()
        words = shlex.split(spec) if isinstance(spec, str) else []
        kinds = ", ".join(registry.BACKENDS)
        if not words:
            raise TargetError(f"empty or invalid target {spec!r}; expected one of {kinds}")
        kind = registry.ALIASES.get(words[0].lower(), words[0].lower())
        if kind not in registry.BACKENDS:
            raise TargetError(f"unknown target {words[0]!r}; expected one of {kinds} (e.g. 'cuda')")
        target = registry.BACKENDS[kind].defaults
        for option in words[1:]:
            target = _apply_option(target, option)
        return target


# The element types every backend has; each backend's defaults add what else it has.
COMMON_DTYPES = frozenset(
    {"float32", "float16", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "bool"}
)

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


def _registry() -> ModuleType:
    # The registry imports every backend folder, which import this module: looked up when used.
    from . import registry

    return registry


def default_target() -> Target:
    """The target ``build`` and the tuner use when none is given: C (``TIR_TARGET`` overrides)."""
    return Target.parse(os.environ.get("TIR_TARGET", "c"))
