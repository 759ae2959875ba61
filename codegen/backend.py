"""The backend record: everything ``build``, the measurer and the simulator need to know about one target.

Each target is one folder (``codegen/c``, ``codegen/cuda``, ``codegen/metal``)
whose ``__init__.py`` exports a :class:`Backend` named ``BACKEND``; the registry
(codegen/registry.py) lists them. Nothing outside the folder and the registry
asks "which target is this?": ``Target.parse`` takes the kinds, aliases and
default limits from here, ``build`` the printer, prelude, devices and runtime,
the measurer the runtime and the ahead-of-time compile, and the kernel checks
the words the target uses for a thread group and its shared memory.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .c_family import CFamilyPrinter
from .errors import BuildError
from .program import CompiledFunction
from .target import Target

if TYPE_CHECKING:
    from .module import Module

Loader = Callable[[str, Sequence[CompiledFunction], Target], Any]


@dataclass(frozen=True)
class Backend:
    """One target's code generator and runtimes.

    ``kind``: the target's name ("c"); ``aliases``: other names ``Target.parse``
    accepts for it. ``defaults``: its Target with default arch and limits (threads
    per group, shared memory, vector width, dtypes). ``printer``: the
    ``CFamilyPrinter`` subclass; ``prelude(needs)``: the text before the functions.
    ``is_gpu``: whether functions are split into kernel launches. ``runtimes``: each
    device the target runs on (the first is the default) with the module whose
    ``load(source, functions, target)`` runs there, imported only when loading.
    ``precompile(source, target)``: compiling done in the build workers (C: the library;
    CUDA: a cubin the runtime loads instead of compiling again), or None.
    ``group_word`` / ``shared_word``: what the target calls a thread group and its
    shared memory, in error messages. ``exporter``: the module whose
    ``export(module, folder, name)`` writes what an application needs (``Module.export``).
    A runtime module may define ``unavailable_reason(target)``: why it cannot run
    here, found without importing CuPy or PyObjC (``unavailable_reason`` below).
    ``warp_reductions``: the target reduces a whole warp in one operation (Metal's
    ``simd_sum``), used by cross-thread reductions. ``async_copy_arch``: the first
    architecture number (``sm_80`` -> 80) with asynchronous global-to-shared copies, or None.
    ``opt_in_shared_bytes(arch)``: the shared memory a kernel may take beyond the target's
    ``max_shared_memory_bytes`` by asking at launch (CUDA's dynamic shared memory), or None.
    """

    kind: str
    aliases: tuple[str, ...]
    defaults: Target
    printer: type[CFamilyPrinter]
    prelude: Callable[[set[str]], str]
    is_gpu: bool
    runtimes: dict[str, str]
    precompile: Callable[[str, Target], object] | None = None
    group_word: str = "block"
    shared_word: str = "shared"
    exporter: str = ""
    warp_reductions: bool = False
    async_copy_arch: int | None = None
    opt_in_shared_bytes: Callable[[str], int] | None = None

    @property
    def devices(self) -> tuple[str, ...]:
        return tuple(self.runtimes)

    def check_device(self, device: str | None) -> str:
        """``device``, or the default one when None; a device the target lacks is a BuildError."""
        if device is None:
            return self.devices[0]
        if device not in self.runtimes:
            hint = (
                " (the Metal host simulator is build(mod, 'metal', device='sim'))" if device == "sim" else ""
            )
            raise BuildError(
                f"device {device!r} is not available for target {self.kind!r}; "
                f"it has {', '.join(self.devices)}{hint}"
            )
        return device

    def loader(self, device: str | None = None) -> Loader:
        """``load(source, functions, target)`` of the runtime for ``device`` (imports it now)."""
        module = importlib.import_module(self.runtimes[self.check_device(device)])
        return module.load

    def unavailable_reason(self, target: Target, device: str | None = None) -> str | None:
        """Why the runtime for ``device`` cannot run here (one line with the fix), or None.

        The tuner and the ``tir`` command ask before anything is built or written.
        """
        module = importlib.import_module(self.runtimes[self.check_device(device)])
        check = getattr(module, "unavailable_reason", None)
        return check(target) if check is not None else None

    def export(self, module: Module, folder: Path, name: str) -> list[Path]:
        """Write ``module``'s files for applications into ``folder`` (created); the paths written."""
        folder.mkdir(parents=True, exist_ok=True)
        return importlib.import_module(self.exporter).export(module, folder, name)
