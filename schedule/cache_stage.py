"""The copy stage of cache_read and cache_write (cache_read_write.py): the copy block, the cache
buffer, and the rewrite that points the scope's readers or writer at the cache; and
``spatial_stage``, the loop nest around one spatial block that the other staging primitives
(reindex, transform_layout's padding) build."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from tir import (
    Block,
    BlockRealize,
    Buffer,
    BufferLoad,
    For,
    ForKind,
    IfThenElse,
    IterKind,
    IterVar,
    PrimExpr,
    Range,
    SeqStmt,
    Stmt,
    Var,
    const,
)
from tir.arith import Analyzer
from tir.buffer import SCOPE_ALIASES, SCOPES, BufferRegion, normalize_scope
from tir.functor import Mutator, substitute
from tir.stmt import BufferStore, seq

from .analysis import child_blocks
from .errors import ScheduleError
from .state import ScheduleState


class StorageScopeError(ScheduleError):
    """The storage scope is not one we know ("global", "shared", "local" or a Metal alias)."""


def checked_scope(scope: str, primitive_name: str) -> str:
    try:
        return normalize_scope(scope)
    except (ValueError, TypeError):
        aliases = ", ".join(f"{alias!r} for {SCOPE_ALIASES[alias]!r}" for alias in SCOPE_ALIASES)
        raise StorageScopeError(
            f"{primitive_name}: unknown storage scope {scope!r}; use one of "
            f"{', '.join(repr(s) for s in SCOPES)} (also accepted: {aliases})"
        ) from None


def body_size(stmt: Stmt) -> int:
    return len(stmt.seq) if isinstance(stmt, SeqStmt) else 1


def location_before_first(state: ScheduleState, scope: Block, anchor: Block, related: list[Block]):
    """``(loc, pos)``: insert into ``loc``'s body (a For or the scope Block) at ``pos``.

    The point is in the lowest statement holding both ``anchor`` and the first of
    ``related`` that follows it, right before that related block's subtree (TVM's
    CacheLocDetector). With nothing related, the end of the scope.
    """
    order = child_blocks(scope)
    first = next((b for b in order[order.index(anchor) + 1 :] if b in related), None)
    if first is None:
        return scope, body_size(scope.body)
    anchor_ids = {id(s) for s in state.ancestors(state.realize_of(anchor))}
    first_path = [state.realize_of(first), *state.ancestors(state.realize_of(first))]
    for child, node in zip(first_path, first_path[1:]):
        owner = state.parent(node)
        if isinstance(node, SeqStmt) and id(node) in anchor_ids and isinstance(owner, (For, Block)):
            return owner, next(i for i, s in enumerate(node.seq) if s is child)
    return scope, body_size(scope.body)


def insert(body: Stmt, pos: int, stage: Stmt) -> Stmt:
    items = list(body.seq) if isinstance(body, SeqStmt) else [body]
    items.insert(pos, stage)
    return seq(*items)


def copy_stage(
    original: Buffer,
    cache: Buffer,
    region: tuple[Range, ...],
    compact: bool,
    into_cache: bool,
    written: tuple[tuple[Var, ...], PrimExpr] | None = None,
    name: str | None = None,
):
    """Loops ``ax*`` over ``region`` around a block named like ``cache`` (or ``name``) that copies
    between the two.

    ``into_cache`` copies original -> cache (cache_read), else cache -> original
    (the write-back of cache_write). A ``compact`` cache starts at the region's
    minimum: the original's index is then ``min + v`` and the cache's ``v``.
    ``written`` (axes, condition) limits the write-back to the elements whose
    original indices satisfy the condition: those the cached block wrote.
    """
    analyzer = Analyzer()
    loop_vars = [Var(f"ax{i}", r.extent.dtype) for i, r in enumerate(region)]
    iter_vars, values, original_idx, cache_idx = [], [], [], []
    for i, (r, ax, extent) in enumerate(zip(region, loop_vars, cache.shape)):
        v = Var(f"v{i}", r.extent.dtype)
        iter_vars.append(IterVar(v, Range(const(0, extent.dtype), extent), IterKind.SPATIAL))
        values.append(ax if compact else analyzer.simplify(r.min + ax))
        original_idx.append(analyzer.simplify(r.min + v) if compact else v)
        cache_idx.append(v)
    src, dst = (original, cache) if into_cache else (cache, original)
    src_idx, dst_idx = (original_idx, cache_idx) if into_cache else (cache_idx, original_idx)
    body: Stmt = BufferStore(dst, BufferLoad(src, tuple(src_idx)), tuple(dst_idx))
    if written is not None:
        for iv in iter_vars:
            analyzer.bind(iv.var, iv.dom)
        axes, condition = written
        condition = analyzer.simplify(substitute(condition, dict(zip(axes, original_idx))))
        if not analyzer.can_prove(condition):
            body = IfThenElse(condition, body)
    block = Block(
        name=name or cache.name,
        iter_vars=tuple(iter_vars),
        reads=(BufferRegion(src, points(src_idx)),),
        writes=(BufferRegion(dst, points(dst_idx)),),
        body=body,
    )
    stmt: Stmt = BlockRealize(tuple(values), const(True), block)
    for ax, r in reversed(list(zip(loop_vars, region))):
        stmt = For(ax, const(0, r.extent.dtype), r.extent, ForKind.SERIAL, stmt)
    return stmt, block


def points(indices) -> tuple[Range, ...]:
    return tuple(Range(i, const(1, i.dtype)) for i in indices)


def cache_buffer(state: ScheduleState, buffer: Buffer, scope: str, region, compact: bool) -> Buffer:
    shape = tuple(r.extent for r in region) if compact else buffer.shape
    return Buffer(state.unique_name(f"{buffer.name}_{scope.replace('.', '_')}"), shape, buffer.dtype, scope)


def shift(indices, region, compact: bool, analyzer: Analyzer):
    if not compact:
        return tuple(indices)
    return tuple(analyzer.simplify(i - r.min) for i, r in zip(indices, region))


class CacheRewriter(Mutator):
    """Points accesses of ``old`` at ``new`` in the chosen blocks and inserts the copy stage.

    ``uses(block)`` says whether a block's accesses move to the cache; ``skip(block)``
    leaves a block (and all inside it) alone; ``regions`` names the region lists of
    a chosen block to rewrite ("reads", or "reads" and "writes"). The stage goes into
    loop ``loc`` at ``pos``; when ``loc`` is the scope block, ``rewrite_scope`` does it.
    """

    def __init__(self, old, new, region, compact, uses, skip, regions, loc, pos, stage):
        self.old, self.new, self.region, self.compact = old, new, region, compact
        self.uses, self.skip, self.regions = uses, skip, regions
        self.loc, self.pos, self.stage = loc, pos, stage
        self.active = False
        self.analyzer = Analyzer()

    def visit_Block(self, block: Block):
        if self.skip(block):
            return block
        saved, self.active = self.active, self.uses(block)
        new_block = self.generic_visit(block)
        if self.active:
            changes = {name: self._regions(getattr(new_block, name)) for name in self.regions}
            new_block = replace(new_block, **changes)
        self.active = saved
        return new_block

    def visit_For(self, loop: For):
        new_loop = self.generic_visit(loop)
        if loop is self.loc:
            new_loop = replace(new_loop, body=insert(new_loop.body, self.pos, self.stage))
        return new_loop

    def _regions(self, regions):
        out = []
        for r in regions:
            if r.buffer is self.old:
                ranges = tuple(
                    Range(self.analyzer.simplify(x.min - c.min) if self.compact else x.min, x.extent)
                    for x, c in zip(r.region, self.region)
                )
                r = BufferRegion(self.new, ranges)
            out.append(r)
        return tuple(out)

    def visit_BufferLoad(self, load: BufferLoad):
        load = self.generic_visit(load)
        if self.active and load.buffer is self.old:
            return BufferLoad(self.new, shift(load.indices, self.region, self.compact, self.analyzer))
        return load

    def visit_BufferStore(self, store: BufferStore):
        store = self.generic_visit(store)
        if self.active and store.buffer is self.old and "writes" in self.regions:
            return BufferStore(
                self.new, store.value, shift(store.indices, self.region, self.compact, self.analyzer)
            )
        return store


def rewrite_scope(state: ScheduleState, scope: Block, rewriter: CacheRewriter, cache: Buffer) -> None:
    body = rewriter.visit(scope.body)
    if scope is rewriter.loc:
        body = insert(body, rewriter.pos, rewriter.stage)
    init = rewriter.visit(scope.init) if scope.init is not None else None
    new_scope = replace(scope, body=body, init=init, alloc_buffers=(*scope.alloc_buffers, cache))
    state.replace({scope: new_scope})


def spatial_stage(
    name: str,
    extents: list[PrimExpr],
    make_body: Callable[[list[Var]], tuple[Stmt, tuple, tuple]],
    where: Callable[[list[Var]], PrimExpr] | None = None,
) -> Stmt:
    """Loops ``ax{k}`` over ``extents`` around block ``name`` whose spatial iterators ``v{k}`` are
    bound to them. ``make_body(iterators)`` gives the block's ``(body, reads, writes)``;
    ``where(loop_vars)``, if given, its predicate."""
    loop_vars = [Var(f"ax{k}", e.dtype) for k, e in enumerate(extents)]
    iter_vars = tuple(
        IterVar(Var(f"v{k}", e.dtype), Range(const(0, e.dtype), e), IterKind.SPATIAL)
        for k, e in enumerate(extents)
    )
    body, reads, writes = make_body([iv.var for iv in iter_vars])
    block = Block(name=name, iter_vars=iter_vars, reads=reads, writes=writes, body=body)
    predicate = const(True) if where is None else where(loop_vars)
    stmt: Stmt = BlockRealize(tuple(loop_vars), predicate, block)
    for loop_var, extent in reversed(list(zip(loop_vars, extents))):
        stmt = For(loop_var, const(0, extent.dtype), extent, ForKind.SERIAL, stmt)
    return stmt
