"""blockize of a list of blocks: wrap sibling statements holding the blocks in one new outer block.

TVM's ``blockize(blocks: list)``. The blocks' deepest common loop (or block) is the
parent; the consecutive statements of its body that hold the blocks, loops and
statements between included, become the body of a new block ``outer_<B>_<C>_``.
Each loop above (up to the enclosing block) whose variable those statements use
becomes an iterator ``v<loop>`` of the outer block, bound to the loop; it is
spatial (or reduction) where every binding of a listed block that uses the loop
is, opaque otherwise. Inside, the loop variable is replaced by the iterator, and
the listed blocks' own iterators take the suffix ``_i`` as in TVM's output. The
outer block's regions are inferred from its body (the inner regions relaxed
over the inner loops). Every block inside the wrapped statements must be listed:
wrapping one the caller did not name would change its scope silently.
"""

from __future__ import annotations

from dataclasses import replace

from tir import Block, BlockRealize, For, IntImm, IterKind, IterVar, Mutator, Range, Var
from tir.analysis.block_access import infer_access_regions
from tir.functor import collect_vars, post_order_visit, substitute
from tir.stmt import SeqStmt, Stmt, seq

from .errors import ScheduleError
from .state import ScheduleState


class BlockizeBlocksError(ScheduleError):
    """The blocks do not form consecutive statements of one parent, or others lie among them."""


def blockize_blocks(state: ScheduleState, blocks: list[Block], preserve_unit_iters: bool) -> Block:
    """Blockize the listed ``blocks`` in ``state``; returns the new outer block."""
    # Step 1. the common parent, and the consecutive statements of its body holding the blocks
    if not blocks:
        raise BlockizeBlocksError("blockize needs at least one block in the list")
    names = [b.name for b in blocks]
    if len(set(names)) != len(names):
        raise BlockizeBlocksError(f"blockize got the same block twice in {names}", blocks[0])
    paths = [[state.realize_of(b), *state.ancestors(state.realize_of(b))] for b in blocks]
    listed = {id(b) for b in blocks}
    for block, path in zip(blocks, paths):
        inside = next((a for a in path[1:] if id(a) in listed), None)
        if inside is not None:
            raise BlockizeBlocksError(
                f"can't blockize block {block.name!r} together with block {inside.name!r}, which holds it",
                block,
            )
    shared = {id(s) for s in paths[0]}
    for path in paths[1:]:
        shared &= {id(s) for s in path}
    parent = next(s for s in paths[0] if id(s) in shared and isinstance(s, (For, Block)))
    items = list(parent.body.seq) if isinstance(parent.body, SeqStmt) else [parent.body]
    tops = [next(k for k, item in enumerate(items) if any(s is item for s in path)) for path in paths]
    low, high = min(tops), max(tops)
    wrapped = items[low : high + 1]
    inner_blocks: list[Block] = []
    for item in wrapped:
        post_order_visit(item, lambda n: inner_blocks.append(n) if isinstance(n, Block) else None)
    for inner in inner_blocks:
        if id(inner) not in listed and not any(_holds(b, inner) for b in blocks):
            raise BlockizeBlocksError(
                f"block {inner.name!r} lies among the blocks {names} but is not listed; blockize wraps "
                "whole statements of the blocks' common parent: list it too, or move it away first",
                inner,
            )

    # Step 2. one outer iterator per loop above whose variable the statements use
    used = set()
    for item in wrapped:
        used |= collect_vars(item)
    loops = _loops_down_to(state, parent)
    realizes = [path[0] for path in paths]
    iters, values, vmap = [], [], {}
    for loop in loops:
        if loop.loop_var not in used:
            continue
        if not preserve_unit_iters and isinstance(loop.extent, IntImm) and loop.extent.value == 1:
            vmap[loop.loop_var] = loop.min
            continue
        var = Var(f"v{loop.loop_var.name}", loop.loop_var.dtype)
        iters.append(IterVar(var, Range(loop.min, loop.extent), _kind_of(loop.loop_var, realizes)))
        values.append(loop.loop_var)
        vmap[loop.loop_var] = var

    # Step 3. the statements over the outer iterators, the listed blocks' iterators renamed
    renamed = [_Rename(set(names)).visit(substitute(item, vmap)) for item in wrapped]
    outer = Block(state.unique_name("outer_" + "_".join(names) + "_"), tuple(iters), (), (), seq(*renamed))
    reads, writes = infer_access_regions(outer)
    outer = replace(outer, reads=reads, writes=writes)
    realize = BlockRealize(tuple(values), IntImm(1, "bool"), outer)
    state.replace({parent: replace(parent, body=seq(*items[:low], realize, *items[high + 1 :]))})
    return outer


def _holds(outer: Block, inner: Block) -> bool:
    found = []
    post_order_visit(outer.body, lambda n: found.append(n) if n is inner else None)
    return bool(found)


def _loops_down_to(state: ScheduleState, parent: For | Block) -> list[For]:
    """The loops from the block enclosing ``parent`` down to ``parent`` itself, outermost first."""
    if isinstance(parent, Block):
        return []
    loops = [parent]
    for anc in state.ancestors(parent):
        if isinstance(anc, Block):
            break
        if isinstance(anc, For):
            loops.append(anc)
    return loops[::-1]


def _kind_of(loop_var: Var, realizes: list[BlockRealize]) -> IterKind:
    kinds = {
        iv.kind
        for realize in realizes
        for iv, value in zip(realize.block.iter_vars, realize.iter_values)
        if loop_var in collect_vars(value)
    }
    return (
        kinds.pop() if len(kinds) == 1 and kinds <= {IterKind.SPATIAL, IterKind.REDUCE} else IterKind.OPAQUE
    )


class _Rename(Mutator):
    """Gives the iterators of the listed blocks (by name: handles need unique names) the suffix ``_i``."""

    def __init__(self, names: set[str]):
        self.names = names

    def visit_BlockRealize(self, realize: BlockRealize) -> Stmt:
        block = realize.block
        if block.name not in self.names:
            return self.generic_visit(realize)
        fresh = {iv.var: Var(f"{iv.var.name}_i", iv.var.dtype) for iv in block.iter_vars}
        inner = self.visit(block.body)
        new = replace(
            block,
            iter_vars=tuple(replace(iv, var=fresh[iv.var]) for iv in block.iter_vars),
            reads=tuple(substitute(r, fresh) for r in block.reads),
            writes=tuple(substitute(r, fresh) for r in block.writes),
            body=substitute(inner, fresh),
            init=substitute(block.init, fresh) if block.init is not None else None,
        )
        return replace(realize, block=new)
