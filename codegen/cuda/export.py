"""Export for the CUDA target: the .cu source, PTX and cubin, and the launch description as JSON.

``Module.export(folder, name)`` on a CUDA module writes ``<name>.cu`` (every
kernel ``extern "C"``), ``<name>.json`` (per function: its parameters in
order, the workspaces the host allocates, and each kernel launch with its grid,
block and argument names, in launch order) and, where nvcc is installed,
``<name>.ptx`` and ``<name>.cubin`` for the target's architecture, ready for
``cuModuleLoadData``. Without nvcc, NVRTC at run time compiles the ``.cu``.
"""

from __future__ import annotations

import json
from pathlib import Path

from codegen.module import Module

from .nvcc import compile_with_nvcc, nvcc_available


def export(module: Module, folder: Path, name: str) -> list[Path]:
    """Write the source, the launch JSON and (with nvcc) PTX and cubin of ``module`` into ``folder``."""
    source = folder / f"{name}.cu"
    source.write_text(module.source)
    launches = folder / f"{name}.json"
    launches.write_text(launch_json(module, source.name))
    written = [source, launches]
    if nvcc_available():
        for output in ("ptx", "cubin"):
            path = folder / f"{name}.{output}"
            path.write_bytes(compile_with_nvcc(module.source, module.target.arch, output))
            written.append(path)
    return written


def launch_json(module: Module, source_name: str) -> str:
    """The module's functions as a host program needs them (codegen.program.CompiledFunction.as_json)."""
    description = {
        "target": str(module.target),
        "arch": module.target.arch,
        "source": source_name,
        "functions": [function.as_json() for function in module.functions.values()],
    }
    return json.dumps(description, indent=2) + "\n"
