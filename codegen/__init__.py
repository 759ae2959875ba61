"""Code generation: lowering pipelines, C/CUDA/Metal printers, runtimes, ``build`` and GFLOPS.

``build(mod, "c" | "cuda" | "metal", device=None | "sim")`` returns a Module with
``get_source()``, ``mod["main"](*arrays)``, ``time_evaluator`` and ``benchmark``.
"""

from .build import build
from .errors import BuildError, CompileError, LaunchError, RuntimeUnavailableError
from .module import BenchmarkResult, Module, TimingResult
from .pipeline import lower_for_target
from .target import Target

__all__ = [
    "BenchmarkResult",
    "BuildError",
    "CompileError",
    "LaunchError",
    "Module",
    "RuntimeUnavailableError",
    "Target",
    "TimingResult",
    "build",
    "lower_for_target",
]
