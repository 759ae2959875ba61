"""Software prefetch for the C target: the ``pragma_prefetch`` loop annotation.

``sch.annotate(loop, "pragma_prefetch", d)`` asks the C printer to start each
iteration of ``loop`` with one ``__builtin_prefetch`` per distinct vector load
of its body whose address moves with the loop, for the address that load reads
``d`` iterations later. Scalar loads (a broadcast input, a contiguous stream the
hardware prefetchers follow) and loads indexed by loops or lets inside the body
are left alone, so the prefetches are computable at the top of the iteration,
and so are gathers (an address that itself loads, ``A[idx[i], ...]``: the index
load ``d`` iterations ahead would read past ``idx``). A prefetch never faults,
so the last iterations' prefetches past the end of a buffer are harmless. It
is for streams the hardware does not follow: seed 003's filter slice read 256
bytes every 4.6 KB (Intel's L1 stride prefetcher stops at 2 KB strides). Only
the C target prints it; a GPU build reports the annotation, and so does any
build where it sits on a vectorized or unrolled loop (the loop disappears in
the lowering: codegen/annotations.py checks both).

Before (``d = 2`` on ``ax4_0``)::

    for (int ax4_0 = 0; ax4_0 < 64; ++ax4_0) {
      ... *(float16*)(filter + ax4_0 * 2304 + c_0 * 64) ...

After::

    for (int ax4_0 = 0; ax4_0 < 64; ++ax4_0) {
      __builtin_prefetch(filter + (ax4_0 + 2) * 2304 + c_0 * 64);
      ... *(float16*)(filter + ax4_0 * 2304 + c_0 * 64) ...
"""

from __future__ import annotations

from tir import dtype as _dt
from tir import op as _op
from tir.buffer import Buffer
from tir.expr import BufferLoad, IntImm, PrimExpr, Ramp, Var
from tir.functor import collect_vars, post_order_visit, substitute
from tir.stmt import For, LetStmt

from ..errors import BuildError

PREFETCH_KEY = "pragma_prefetch"


def prefetch_distance(loop: For) -> int:
    """The annotation's distance in iterations; BuildError unless it is a positive integer."""
    value = loop.annotations[PREFETCH_KEY]
    distance = value.value if isinstance(value, IntImm) else value
    if not isinstance(distance, int) or isinstance(distance, bool) or distance < 1:
        raise BuildError(
            f"loop {loop.loop_var.name}: {PREFETCH_KEY} is {value!r}; give the distance in iterations "
            f'as a positive integer, e.g. sch.annotate(loop, "{PREFETCH_KEY}", 2)'
        )
    return distance


def prefetched_loads(loop: For) -> list[tuple[Buffer, PrimExpr]]:
    """(buffer, first element index ``distance`` iterations ahead) of each distinct vector load of
    ``loop``'s body that moves with the loop, in the order they first appear."""
    inner: set[Var] = set()
    loads: list[BufferLoad] = []

    def visit(node) -> None:
        if isinstance(node, For):
            inner.add(node.loop_var)
        elif isinstance(node, LetStmt):
            inner.add(node.var)
        elif (
            isinstance(node, BufferLoad)
            and _dt.lanes_of(node.dtype) > 1
            and isinstance(node.indices[-1], Ramp)
        ):
            loads.append(node)

    post_order_visit(loop.body, visit)
    ahead = {loop.loop_var: _op.add(loop.loop_var, prefetch_distance(loop))}
    found: list[tuple[Buffer, PrimExpr]] = []
    for load in loads:
        base = load.indices[-1].base
        used = collect_vars(base)
        if loop.loop_var in used and not used & inner and not _reads_memory(base):
            found.append((load.buffer, substitute(base, ahead)))
    return found


def _reads_memory(expr: PrimExpr) -> bool:
    """Whether ``expr`` loads from a buffer (a gather's index): evaluated ``distance`` iterations
    ahead, that load itself would read past its buffer in the last iterations."""
    loads: list[BufferLoad] = []
    post_order_visit(expr, lambda n: loads.append(n) if isinstance(n, BufferLoad) else None)
    return bool(loads)
