"""Give every thread-bound loop of one tag a single Var per kernel (TVM's UnifyThreadBinding).

On block-form IR, after compact_buffer_allocation. A kernel is the subtree of an
outermost thread-bound loop. Inside it, all loops bound to one tag ("threadIdx.x", ...)
get one Var named after the tag (``threadIdx_x``) and must have the same extent; the
code generators then read ``threadIdx.x`` wherever the schedule wrote ``i_1`` or
``ax0_1``. A loop nested inside a loop of its own tag (the cooperative fetch under the
compute's threadIdx.x) is the same hardware index, so it is removed and its body uses the
outer Var: on the GPU each thread runs that body once, not extent times. Serial
executor semantics end here: with the nested loop gone the function is no longer the
same serial program, so check numbers before this pass and structure after it.
"""

from __future__ import annotations

from ..expr import Var
from ..function import PrimFunc
from ..functor import StmtMutator, substitute
from ..stmt import For, ForKind, Stmt


class _Unifier(StmtMutator):
    def __init__(self):
        self.kernel: dict[str, tuple[Var, For]] | None = None
        self.active: set[str] = set()

    def visit_For(self, loop: For) -> Stmt:
        tag = loop.thread_tag if loop.kind is ForKind.THREAD_BINDING else None
        if tag is None:
            return self.generic_visit(loop)
        opens_kernel = self.kernel is None
        if opens_kernel:
            self.kernel = {}
        try:
            return self._bound_loop(loop, tag)
        finally:
            if opens_kernel:
                self.kernel = None

    def _bound_loop(self, loop: For, tag: str) -> Stmt:
        known = self.kernel.get(tag)
        if known is None:
            var = Var(tag.replace(".", "_"), loop.loop_var.dtype)
            self.kernel[tag] = (var, loop)
        else:
            var, first = known
            if not _same_extent(first, loop):
                raise ValueError(
                    f"loops bound to {tag!r} in one kernel must have one extent, but "
                    f"'{first.loop_var.name}' has extent {first.extent!r} and '{loop.loop_var.name}' has "
                    f"{loop.extent!r}; split the loops so both have the same extent (use T.where for the "
                    "ragged part) or bind one of them to another thread axis"
                )
        body = substitute(loop.body, {loop.loop_var: var})
        if tag in self.active:
            return self.visit(body)
        self.active.add(tag)
        try:
            body = self.visit(body)
        finally:
            self.active.discard(tag)
        return For(var, loop.min, loop.extent, loop.kind, body, loop.thread_tag, loop.annotations)


def _same_extent(a: For, b: For) -> bool:
    from ..arith import Analyzer

    return Analyzer().can_prove(a.extent.equal(b.extent))


def unify_thread_binding(func: PrimFunc) -> PrimFunc:
    """One Var per thread tag per kernel; nested loops of an already bound tag are removed."""
    return func.with_body(_Unifier().visit(func.body))
