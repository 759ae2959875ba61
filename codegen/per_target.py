"""The per-target entry points a caller looks up by target kind: is the runtime here, and export.

``unavailable_reason(target, device)`` says, before anything is built or any
file is written, why a target's runtime cannot run on this machine (None when
it may); the tuner and the ``tir`` command check it first. ``export_module``
hands a built Module to its target's ``export.py`` (codegen/c, codegen/cuda,
codegen/metal). Each target keeps its own functions in its folder, so a backend
record per target (one registry) can take them over as they are.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .target import Target

if TYPE_CHECKING:
    from .module import Module


def unavailable_reason(target: Target | str, device: str | None = None) -> str | None:
    """Why ``target``'s runtime cannot run here (a one-line message with the fix), or None."""
    target = Target.parse(target)
    if target.kind == "c":
        from .c.runtime import unavailable_reason as reason

        return reason(target)
    if target.kind == "cuda":
        from .cuda.runtime import unavailable_reason as reason

        return reason()
    if device == "sim":
        return None  # the Metal host simulator needs only the C++ compiler, checked when it builds
    from .metal.runtime import unavailable_reason as reason

    return reason()


def export_module(module: Module, folder: Path, name: str) -> list[Path]:
    """Write ``module``'s files for its target into ``folder`` (created); the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    kind = module.target.kind
    if kind == "c":
        from .c.export import export
    elif kind == "cuda":
        from .cuda.export import export
    else:
        from .metal.export import export
    return export(module, folder, name)
