"""The registry of backends: one entry per target folder, looked up by kind or alias.

Adding a target is a folder ``codegen/<kind>/`` whose ``__init__.py`` exports a
``BACKEND`` (codegen/backend.py says what it holds) and one line in
``BACKENDS`` below; docs/ARCHITECTURE.md ("Backends") walks through it.
"""

from __future__ import annotations

from . import c, cuda, metal
from .backend import Backend

BACKENDS: dict[str, Backend] = {backend.kind: backend for backend in (c.BACKEND, cuda.BACKEND, metal.BACKEND)}
ALIASES: dict[str, str] = {alias: b.kind for b in BACKENDS.values() for alias in b.aliases}


def backend_for(kind: str) -> Backend:
    """The backend of a target kind ("c", "cuda", "metal"); KeyError names the known ones."""
    try:
        return BACKENDS[kind]
    except KeyError:
        raise KeyError(f"no backend for target kind {kind!r}; known: {', '.join(BACKENDS)}") from None
