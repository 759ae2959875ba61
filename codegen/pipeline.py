"""The lowering pipelines: one linear list of passes per target kind, from TensorIR to flat kernels.

``lower_for_target(func, target, dump=...)`` runs the target's passes in order and
hands back block-free, flat IR that the printers print directly. ``dump(name, func)``
sees the IR after every pass (``build(..., dump=print_pass)`` shows them all).

GPU (CUDA, Metal)::

    verify_access_bounds       a provably out-of-bounds access is a BuildError
    lower_cross_thread_reduction  reductions bound to threadIdx: in-thread, all-reduce, write-back
    bind_default_threads       unbound loop nests get blockIdx.x/threadIdx.x (or one thread)
    plan_buffer_allocation     shared buffers above the threadIdx loops, local ones inside
    compact_buffer_allocation  each cache shrinks to the region one thread block touches
    inject_software_pipeline   software_pipeline_* loops: multi-versioned buffers, prologue, steady
                               loop, epilogue; async stages copy with cp.async (CUDA sm_80+)
    inject_thread_sync         barriers between shared-memory writers and readers
    unify_thread_binding       one variable per thread tag per kernel, extents checked
    lower_init_block ... simplify   tir.transform.lower: blocks gone, buffers flat
                               (checked builds: insert_runtime_checks before flatten_buffer)
    lower_thread_allreduce     all-reduces become warp shuffles (Metal: simd_sum, ...) + shared memory
    vectorize_loop             float4 loads/stores where contiguous, scalar code otherwise
    unroll_loop                explicit unrolling of unroll loops and auto-unroll regions;
                               #pragma unroll on small serial nests (registers for local arrays)
    simplify                   fold what unrolling exposed

C: the same without the GPU-only passes (remove_software_pipeline checks the pipeline
annotations and keeps the plain loop): thread-bound loops stay separate loops that
run serially (so barriers are never needed, and a reduction bound to threadIdx is a
plain loop), blockIdx and parallel loops become OpenMP loops in the printer.

``stop_before=`` ends the pipeline before a pass: ``FEATURE_STAGE`` is where the
tuner's features read the IR (tuner/features.py), flat and block-free with caches
allocated and barriers placed, before the passes that only decide how loops are
emitted. ``planned_allocations`` is the plan and compact pair, the most expensive
passes, with the last results kept by function identity: the tuner's limit check
and the features of one candidate plan it once, and the pipeline uses it too
when no ``dump`` looks at the IR. It leaves out the blocks' read and write
regions, which only the printed IR shows (no later pass reads them); with a
``dump`` every pass runs on its own and the regions are there.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from tir.analysis.access_bounds import verify_access_bounds
from tir.function import PrimFunc
from tir.transform import LOWERING_PASSES, simplify
from tir.transform.bind_default_threads import bind_default_threads
from tir.transform.compact_buffer_allocation import compact_buffer_allocation
from tir.transform.inject_software_pipeline import inject_software_pipeline, remove_software_pipeline
from tir.transform.inject_thread_sync import inject_thread_sync
from tir.transform.insert_runtime_checks import insert_runtime_checks
from tir.transform.lower_cross_thread_reduction import lower_cross_thread_reduction
from tir.transform.lower_thread_allreduce import lower_thread_allreduce
from tir.transform.plan_buffer_allocation import plan_buffer_allocation
from tir.transform.unify_thread_binding import unify_thread_binding
from tir.transform.unroll_loop import unroll_loop
from tir.transform.vectorize_loop import vectorize_loop

from .target import Target

# Loop nests running at most this many statements get `#pragma unroll` on GPUs (unroll_loop).
GPU_PRAGMA_UNROLL_STEPS = 1024

Dump = Callable[[str, PrimFunc], None]
Pass = Callable[[PrimFunc], PrimFunc]

# The stage the tuner's features read: every pass before vectorize_loop.
FEATURE_STAGE = "vectorize_loop"
# The planning pair that planned_allocations runs (and keeps) in one step.
_PLANNING = ("plan_buffer_allocation", "compact_buffer_allocation")
_PLANNED: OrderedDict[PrimFunc, PrimFunc] = OrderedDict()
_PLANNED_KEPT = 64
# Passes that only check the IR and change nothing; ``verify=False`` leaves them out.
_CHECK_ONLY = ("verify_access_bounds",)


def gpu_passes(target: Target, check_bounds: bool = False) -> list[tuple[str, Pass]]:
    """The CUDA and Metal pipeline, in order."""
    warp, warp_reductions = target.warp_size, target.backend.warp_reductions
    return [
        ("verify_access_bounds", verify_access_bounds),
        ("lower_cross_thread_reduction", lower_cross_thread_reduction),
        ("bind_default_threads", lambda f: bind_default_threads(f, min(256, target.max_threads_per_group))),
        ("plan_buffer_allocation", plan_buffer_allocation),
        ("compact_buffer_allocation", compact_buffer_allocation),
        ("inject_software_pipeline", lambda f: inject_software_pipeline(f, target.has_async_copy)),
        ("inject_thread_sync", inject_thread_sync),
        ("unify_thread_binding", unify_thread_binding),
        *_lowering_passes(check_bounds),
        ("lower_thread_allreduce", lambda f: lower_thread_allreduce(f, warp, warp_reductions)),
        ("vectorize_loop", lambda f: vectorize_loop(f, target.vector_bytes)),
        ("unroll_loop", lambda f: unroll_loop(f, pragma_max_steps=GPU_PRAGMA_UNROLL_STEPS)),
        ("simplify", simplify),
    ]


def c_passes(target: Target, check_bounds: bool = False) -> list[tuple[str, Pass]]:
    """The C pipeline, in order."""
    return [
        ("verify_access_bounds", verify_access_bounds),
        ("plan_buffer_allocation", plan_buffer_allocation),
        ("compact_buffer_allocation", compact_buffer_allocation),
        ("remove_software_pipeline", remove_software_pipeline),
        *_lowering_passes(check_bounds),
        ("vectorize_loop", lambda f: vectorize_loop(f, target.vector_bytes)),
        ("unroll_loop", unroll_loop),
        ("simplify", simplify),
    ]


def _lowering_passes(check_bounds: bool) -> list[tuple[str, Pass]]:
    """tir.transform.lower's passes; checked builds guard accesses before buffers are flattened."""
    passes = [(p.__name__, p) for p in LOWERING_PASSES]
    if check_bounds:
        at = [name for name, _ in passes].index("flatten_buffer")
        passes.insert(at, ("insert_runtime_checks", insert_runtime_checks))
    return passes


def target_passes(target: Target, check_bounds: bool = False) -> list[tuple[str, Pass]]:
    """The pipeline of ``target``'s kind, in order."""
    return gpu_passes(target, check_bounds) if target.is_gpu else c_passes(target, check_bounds)


def lower_for_target(
    func: PrimFunc,
    target: Target | str,
    dump: Dump | None = None,
    check_bounds: bool = False,
    *,
    stop_before: str | None = None,
    verify: bool = True,
) -> PrimFunc:
    """Lower ``func`` for ``target``; ``dump(pass_name, func)`` sees the IR after each pass.

    ``check_bounds`` adds run-time checks for what the bounds prover could not decide.
    ``stop_before`` (a pass name, e.g. ``FEATURE_STAGE``) returns the IR before that pass.
    ``verify=False`` skips the passes that only check (the bounds prover): the tuner's
    features read candidates that their build verifies anyway, thousands of times a run.
    """
    target = Target.parse(target)
    passes = target_passes(target, check_bounds)
    if not verify:
        passes = [(name, p) for name, p in passes if name not in _CHECK_ONLY]
    names = [name for name, _ in passes]
    if stop_before is not None and stop_before not in names:
        raise ValueError(f"the {target.kind} pipeline has no pass {stop_before!r}; its passes are {names}")
    end = names.index(stop_before) if stop_before is not None else len(passes)
    number = 0
    while number < end:
        name, lowering_pass = passes[number]
        if dump is None and tuple(names[number : number + 2]) == _PLANNING and number + 2 <= end:
            func = planned_allocations(func)
            number += 2
            continue
        func = lowering_pass(func)
        if dump is not None:
            dump(name, func)
        number += 1
    return func


def planned_allocations(func: PrimFunc) -> PrimFunc:
    """``func`` after plan_buffer_allocation and compact_buffer_allocation, without the regions
    of the blocks they add or change; the last results are kept (by function identity), so
    one candidate is planned once for its limit check, its features and its build."""
    found = _PLANNED.get(func)
    if found is None:
        found = compact_buffer_allocation(plan_buffer_allocation(func, False), False)
        _PLANNED[func] = found
        if len(_PLANNED) > _PLANNED_KEPT:
            _PLANNED.popitem(last=False)
    else:
        _PLANNED.move_to_end(func)
    return found
