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

from ..expr import PrimExpr, Var
from ..function import PrimFunc
from ..functor import StmtMutator, substitute
from ..stmt import For, ForKind, Stmt


class _Unifier(StmtMutator):
    """Renames and removes the bound loops, statements only; ``vmap`` collects each bound loop's
    variable -> its tag's Var, substituted into each kernel once when its outermost bound loop is
    done (not into each bound loop's body as it is met, which walked a kernel once per nesting
    level; nor into the whole function at the end, where two kernels binding one loop Var would
    both read the second kernel's thread Var)."""

    def __init__(self):
        self.kernel: dict[str, tuple[Var, For, PrimExpr]] | None = None
        self.active: set[str] = set()
        self.vmap: dict[Var, PrimExpr] = {}

    def visit_For(self, loop: For) -> Stmt:
        tag = loop.thread_tag if loop.kind is ForKind.THREAD_BINDING else None
        if tag is None:
            return self.generic_visit(loop)
        if self.kernel is not None:
            return self._bound_loop(loop, tag)
        self.kernel, self.vmap = {}, {}
        try:
            return substitute(self._bound_loop(loop, tag), self.vmap)
        finally:
            self.kernel = None

    def _bound_loop(self, loop: For, tag: str) -> Stmt:
        # The loop's range as it reads with the outer bound loops renamed.
        start, extent = substitute(loop.min, self.vmap), substitute(loop.extent, self.vmap)
        known = self.kernel.get(tag)
        if known is None:
            var = Var(tag.replace(".", "_"), loop.loop_var.dtype)
            self.kernel[tag] = (var, loop, extent)
        else:
            var, first, first_extent = known
            if not _same_extent(first_extent, extent):
                raise ValueError(
                    f"loops bound to {tag!r} in one kernel must have one extent, but "
                    f"'{first.loop_var.name}' has extent {first_extent!r} and '{loop.loop_var.name}' has "
                    f"{extent!r}; split the loops so both have the same extent (use T.where for the "
                    "ragged part) or bind one of them to another thread axis"
                )
        self.vmap[loop.loop_var] = var
        if tag in self.active:
            return self.visit(loop.body)
        self.active.add(tag)
        try:
            body = self.visit(loop.body)
        finally:
            self.active.discard(tag)
        return For(var, start, extent, loop.kind, body, loop.thread_tag, loop.annotations)


def _same_extent(a: PrimExpr, b: PrimExpr) -> bool:
    from ..arith import Analyzer

    return Analyzer().can_prove(a.equal(b))


def unify_thread_binding(func: PrimFunc) -> PrimFunc:
    """One Var per thread tag per kernel; nested loops of an already bound tag are removed."""
    return func.with_body(_Unifier().visit(func.body))
