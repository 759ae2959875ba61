"""``build(mod, target)``: lower, print, describe and load a module for a target.

For each PrimFunc: check what the target can do (static shapes, dtypes) and that
every annotation is one the lowering acts on (codegen/annotations.py), count
its FLOPs, run the target's pipeline (codegen/pipeline.py), split GPU kernels
and check their limits (codegen/kernels.py), and print it with the target's
printer. The module's one source text goes to the target's runtime:
``"c"`` compiles with the system C compiler, ``"cuda"`` with NVRTC through
CuPy, ``"metal"`` with the Metal framework on macOS, and
``build(mod, "metal", device="sim")`` with the Metal host simulator (chosen
explicitly, never as a fallback). The printer, prelude, devices and runtimes
come from the target's backend record (codegen/backend.py). Where a runtime
cannot run (no GPU here) the module still holds the source; calling it says
why it cannot run.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import replace

from tir.analysis.flops import FlopCountError, flop_count
from tir.analysis.well_formed import verify_well_formed
from tir.buffer import Buffer
from tir.expr import IntImm, Var
from tir.function import IRModule, PrimFunc

from .annotations import check_annotations
from .buffer_layouts import bind_buffer_layouts
from .c_family import stored_buffers
from .checks import check_sites, state_spec
from .errors import BuildError, RuntimeUnavailableError
from .kernels import call_time_extent, check_dtypes, split_device_kernels
from .module import Module
from .pipeline import Dump, lower_for_target
from .program import BufferSpec, CompiledFunction
from .target import Target


def build(
    mod: IRModule | PrimFunc,
    target: Target | str = "c",
    device: str | None = None,
    dump: Dump | None = None,
    check_bounds: bool = False,
) -> Module:
    """Compile every function of ``mod`` for ``target``; see the module docstring.

    ``check_bounds=True`` makes a checked build: accesses the bounds prover could
    not decide and integer divisors are checked at run time, and a failed check
    raises ``BoundsCheckError`` / ``DivisionCheckError`` (codegen/checks.py).
    """
    target = Target.parse(target)
    device = target.backend.check_device(device)
    source, functions = generate_source(mod, target, dump, check_bounds)
    loader = _loader(target, device, source, functions)
    module = Module(source, functions, target, loader, timings=device != "sim")
    with contextlib.suppress(RuntimeUnavailableError):
        module.loaded  # noqa: B018 - compile now, so compiler errors surface at build
    return module


def generate_source(
    mod: IRModule | PrimFunc, target: Target | str, dump: Dump | None = None, check_bounds: bool = False
) -> tuple[str, list[CompiledFunction]]:
    """The module's source text for ``target`` and each function's description, without compiling."""
    target = Target.parse(target)
    if isinstance(mod, PrimFunc):
        mod = IRModule.from_func(mod)
    printer_class, prelude = target.backend.printer, target.backend.prelude
    needs: set[str] = set()
    sources, functions = [], []
    for name, func in mod.functions.items():
        try:
            source, spec = _build_function(name, func, target, printer_class, needs, dump, check_bounds)
        except BuildError:
            raise
        except Exception as error:  # a bug of ours; the user still gets a BuildError that says so
            raise BuildError(
                f"function {name}: internal error of the code generator ({type(error).__name__}: {error}); "
                "please report it with the program"
            ) from error
        sources.extend(source)
        functions.append(spec)
    return "\n\n".join(part for part in (prelude(needs), *sources) if part) + "\n", functions


def _build_function(
    name, func, target, printer_class, needs, dump, check_bounds
) -> tuple[list[str], CompiledFunction]:
    params = _param_specs(name, func)
    func, shape_params = _shape_parameters(name, func, target)
    params += shape_params
    func = bind_buffer_layouts(func, f"function {name}")
    check_annotations(func, f"function {name}", gpu=target.is_gpu)
    check_dtypes(func, target, f"function {name}")
    try:
        flops, counted = flop_count(func), None
    except FlopCountError:
        flops, counted = 0, func  # a dynamic shape: counted per call (CompiledFunction.flops_for_call)
    try:
        verify_well_formed(func)
        lowered = lower_for_target(func, target, dump, check_bounds)
    except BuildError:
        raise
    except ValueError as error:
        raise BuildError(f"function {name}: {error}") from error
    if not target.is_gpu:
        printer = printer_class(target)
        source = printer.function_source(lowered, f"tir_{name}")
        needs |= printer.needs
        checks = check_sites(lowered.attrs, [(f"tir_{name}", lowered.body)])
        params += (state_spec(checks),) if checks else ()
        spec = CompiledFunction(name, params, flops, entry=f"tir_{name}", checks=checks, counted=counted)
        return [source], spec
    kernels, workspaces = split_device_kernels(lowered, target, name)
    checks = check_sites(lowered.attrs, [(k.name, k.body) for k in kernels])
    params += (state_spec(checks),) if checks else ()
    sources = []
    for kernel in kernels:
        printer = printer_class(target)
        sources.append(printer.kernel_source(kernel))
        needs |= printer.needs
    spaces = tuple(_workspace_spec(buffer, func.params) for buffer in workspaces)
    launches = tuple(k.launch() for k in kernels)
    spec = CompiledFunction(
        name, params, flops, launches=launches, workspaces=spaces, checks=checks, counted=counted
    )
    return sources, spec


def _workspace_spec(buffer: Buffer, params: tuple) -> BufferSpec:
    """A global scratch buffer the host allocates per call; a dynamic shape sizes it at call time."""
    where = f"workspace {buffer.name} has the dimension"
    shape = tuple(call_time_extent(dim, params, where) for dim in buffer.shape)
    return BufferSpec(buffer.name, buffer.dtype, shape, True)


def _param_specs(name: str, func: PrimFunc) -> tuple[BufferSpec, ...]:
    written = stored_buffers(func.body)
    specs = []
    for param in func.params:
        if not isinstance(param, Buffer):
            specs.append(BufferSpec(param.name, param.dtype, (), written=False, scalar=True))
            continue
        buffer = param
        shape = []
        for dim in buffer.shape:
            if not isinstance(dim, (IntImm, Var)):
                raise BuildError(
                    f"function {name}: buffer {buffer.name} has the dimension {dim!r}; a dimension is a "
                    "constant or one variable (n), which the call reads from the array's shape"
                )
            shape.append(dim.value if isinstance(dim, IntImm) else dim.name)
        specs.append(BufferSpec(buffer.name, buffer.dtype, tuple(shape), buffer in written))
    return tuple(specs)


def _shape_parameters(name: str, func: PrimFunc, target: Target) -> tuple[PrimFunc, tuple[BufferSpec, ...]]:
    """Dynamic shapes: each variable of a parameter's shape that is not itself a parameter becomes a
    scalar parameter after the others, which the module fills from the first array with it."""
    found: dict[Var, tuple[int, int]] = {}
    for index, param in enumerate(func.params):
        for dim, extent in enumerate(param.shape if isinstance(param, Buffer) else ()):
            if isinstance(extent, Var) and extent not in func.params:
                found.setdefault(extent, (index, dim))
    if not found:
        return func, ()
    specs = tuple(
        BufferSpec(var.name, var.dtype, (), written=False, scalar=True, shape_of=source)
        for var, source in found.items()
    )
    return replace(func, params=(*func.params, *found)), specs


def _loader(
    target: Target, device: str, source: str, functions: list[CompiledFunction]
) -> Callable[[], object]:
    def load():
        return target.backend.loader(device)(source, functions, target)

    return load
