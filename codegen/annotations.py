"""The loop and block annotations the lowering acts on; any other one is a BuildError, never dropped.

``sch.annotate`` accepts any key (as TVM's does), so a typo or an annotation whose
lowering does not exist yet (``pragma_unroll_explicit``) would otherwise build as
if it were not there. ``check_annotations`` runs at the start of every build and
names the loop or block, the key, what the lowering understands, and the closest
known key. The table below is the one place that lists them; a pass that starts
reading a new key adds it here.
"""

from __future__ import annotations

import difflib

from tir.analysis.block_access import EXPLICIT_READ_REGION, EXPLICIT_WRITE_REGION
from tir.function import PrimFunc
from tir.functor import post_order_visit
from tir.stmt import Block, For, ForKind
from tir.transform.compact_buffer_allocation import BUFFER_DIM_ALIGN
from tir.transform.inject_software_pipeline import ASYNC_STAGES_KEY, ORDER_KEY, STAGE_KEY
from tir.transform.unroll_loop import AUTO_UNROLL_KEY, PRAGMA_UNROLL_KEY

from .c.prefetch import PREFETCH_KEY
from .errors import BuildError

LOOP_ANNOTATIONS = {
    AUTO_UNROLL_KEY: "unroll_loop unrolls the loop nest's bodies up to this many statements",
    PRAGMA_UNROLL_KEY: "the printers put `#pragma unroll` on the loop",
    STAGE_KEY: "inject_software_pipeline pipelines the loop's statements by stage (GPU; C checks it)",
    ORDER_KEY: "inject_software_pipeline orders the statements of one pipeline iteration",
    ASYNC_STAGES_KEY: "these stages copy with cp.async where the target has it (CUDA sm_80+)",
    PREFETCH_KEY: "the C printer prefetches the loop's vector loads this many iterations ahead "
    "(codegen/c/prefetch.py; GPU targets reject it)",
}
BLOCK_ANNOTATIONS = {
    AUTO_UNROLL_KEY: "lower_opaque_block puts it on the outermost loops inside the block, as TVM",
    "auto_copy": "read_at/write_at's copy block; its copy loops are already explicit, so it builds as "
    "written (each thread runs the whole copy; TVM lowers it to a cooperative copy instead)",
    BUFFER_DIM_ALIGN: "compact_buffer_allocation pads the written buffer's strides (storage_align)",
    EXPLICIT_READ_REGION: "annotate_buffer_access: compact_buffer_allocation sizes buffers from the "
    "declared read region",
    EXPLICIT_WRITE_REGION: "annotate_buffer_access: compact_buffer_allocation sizes buffers from the "
    "declared write region",
}

# Keys from TVM that we know and do not lower yet, with what to do instead.
NOT_YET = {
    "pragma_unroll_explicit": "unrolling inside pragma_auto_unroll_max_step is always explicit here",
}


# Loop keys only the C target acts on; a GPU build reports them.
C_ONLY_LOOP_ANNOTATIONS = {PREFETCH_KEY}


def check_annotations(func: PrimFunc, where: str, gpu: bool = False) -> None:
    """Raise BuildError for the first annotation of a loop or block of ``func`` the lowering ignores
    (``gpu``: the build is for a GPU target, which ignores the C-only loop keys)."""
    found: list[tuple[str, str, str]] = []
    known = {k for k in LOOP_ANNOTATIONS if not (gpu and k in C_ONLY_LOOP_ANNOTATIONS)}

    def visit(node) -> None:
        if isinstance(node, For):
            found.extend(("loop", node.loop_var.name, key) for key in node.annotations if key not in known)
            if PREFETCH_KEY in node.annotations and node.kind in (ForKind.VECTORIZED, ForKind.UNROLLED):
                raise BuildError(
                    f"{where}: loop {node.loop_var.name} is {node.kind.name.lower()} and has annotation "
                    f"{PREFETCH_KEY!r}; the loop disappears in the lowering, so nothing would prefetch. "
                    "Annotate a serial or parallel loop around it instead."
                )
        elif isinstance(node, Block):
            found.extend(
                ("block", node.name, key) for key in node.annotations if key not in BLOCK_ANNOTATIONS
            )

    post_order_visit(func.body, visit)
    if found:
        kind, name, key = found[0]
        raise BuildError(_message(where, kind, name, key))


def _message(where: str, kind: str, name: str, key: str) -> str:
    known = LOOP_ANNOTATIONS if kind == "loop" else BLOCK_ANNOTATIONS
    understood = "; ".join(f"{k} ({why})" for k, why in known.items()) or "none"
    reason = NOT_YET.get(key, "the lowering does not know it")
    if key in C_ONLY_LOOP_ANNOTATIONS and kind == "loop":
        reason = "only the C target acts on it"
    close = difflib.get_close_matches(key, [*LOOP_ANNOTATIONS, *BLOCK_ANNOTATIONS], n=1)
    hint = f" Did you mean {close[0]!r}?" if close and key not in NOT_YET else ""
    handle = "sch.get_loops(...)" if kind == "loop" else f"sch.get_block({name!r})"
    return (
        f"{where}: {kind} {name} has annotation {key!r}, which the build would ignore ({reason}).{hint} "
        f"On a {kind} the lowering understands: {understood}. Remove it with "
        f"sch.unannotate({handle}, {key!r}) or fix the key."
    )
