"""The schedule's state: the current IRModule and how to find and replace its nodes.

The IR is immutable, so a primitive builds new nodes and ``ScheduleState.replace``
copies the path from the function's root down to the replaced statement. Nodes are
found again through stable keys: a loop by its loop variable (a ``Var`` object that
survives every rewrite that keeps the loop), a block by its function and name
(unique in a function). ``StateIndex`` maps those keys, and every statement's
parent, for the current module; it is rebuilt lazily after each change.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import replace as dc_replace

from tir import (
    Allocate,
    Block,
    BlockRealize,
    For,
    IfThenElse,
    IRModule,
    LetStmt,
    PrimFunc,
    SeqStmt,
    Stmt,
    Var,
)
from tir.functor import StmtMutator
from tir.stmt import seq


class StateIndex:
    """Lookup tables for one PrimFunc: loops by var, blocks by name, parents by id."""

    def __init__(self, func: PrimFunc):
        self.loops: dict[Var, For] = {}
        self.blocks: dict[str, Block] = {}
        self.realizes: dict[str, BlockRealize] = {}
        self.realize_of_block: dict[int, BlockRealize] = {}  # by the block's id: names may repeat
        self.name_counts: dict[str, int] = {}  # TVM allows two blocks of one name; a handle is then ambiguous
        self.parent: dict[int, Stmt | None] = {}
        self._walk(func.body, None)

    def _walk(self, stmt: Stmt, parent: Stmt | None) -> None:
        self.parent[id(stmt)] = parent
        if isinstance(stmt, For):
            self.loops[stmt.loop_var] = stmt
            self._walk(stmt.body, stmt)
        elif isinstance(stmt, BlockRealize):
            self.realizes[stmt.block.name] = stmt
            self.realize_of_block[id(stmt.block)] = stmt
            self._walk(stmt.block, stmt)
        elif isinstance(stmt, Block):
            self.blocks[stmt.name] = stmt
            self.name_counts[stmt.name] = self.name_counts.get(stmt.name, 0) + 1
            if stmt.init is not None:
                self._walk(stmt.init, stmt)
            self._walk(stmt.body, stmt)
        else:
            for child in child_stmts(stmt):
                self._walk(child, stmt)


def child_stmts(stmt: Stmt) -> list[Stmt]:
    """The statements directly below ``stmt`` (in program order)."""
    if isinstance(stmt, SeqStmt):
        return list(stmt.seq)
    if isinstance(stmt, (For, LetStmt, Allocate)):
        return [stmt.body]
    if isinstance(stmt, BlockRealize):
        return [stmt.block]
    if isinstance(stmt, Block):
        return ([stmt.init] if stmt.init is not None else []) + [stmt.body]
    if isinstance(stmt, IfThenElse):
        return [stmt.then_case] + ([stmt.else_case] if stmt.else_case is not None else [])
    return []


class _Replacer(StmtMutator):
    """Replaces statements by identity, descending only along the paths to them (``on_path``
    holds the ids of their ancestors), so the cost follows the depth, not the tree's size."""

    def __init__(self, mapping: dict[int, Stmt | None], on_path: set[int]):
        self.mapping = mapping
        self.on_path = on_path

    def visit(self, node):
        key = id(node)
        if key in self.mapping:
            return self.mapping[key]
        if key not in self.on_path:
            return node
        return super().visit(node)

    def visit_SeqStmt(self, node):
        new = [self.visit(s) for s in node.seq]
        if all(a is b for a, b in zip(new, node.seq)):
            return node
        return seq(*new)


@dataclass(frozen=True)
class CachedFlags:
    """TVM's three facts about a block (``state._get_cached_flags``): its bindings are affine,
    its reads are covered by what the blocks before it in its scope write, and the scope it
    roots is a stage pipeline (every child covered, no write after read)."""

    affine_binding: bool
    region_cover: bool
    stage_pipeline: bool


class ScheduleState:
    """The module being scheduled and the function the primitives work on."""

    def __init__(self, mod: IRModule | PrimFunc, func_name: str = "main"):
        if isinstance(mod, PrimFunc):
            mod = IRModule({func_name: dc_replace(mod, name=func_name)})
        self.mod = mod
        self.func_name = func_name
        self._index: StateIndex | None = None
        self._index_func: PrimFunc | None = None
        # Answers of pure analyses keyed by the IR objects they read (identity, kept alive here):
        # a rewrite that keeps those objects keeps the answer (see block_properties).
        self.analysis_memo: dict[tuple, object] = {}

    @property
    def func(self) -> PrimFunc:
        return self.mod[self.func_name]

    @property
    def index(self) -> StateIndex:
        func = self.func
        if self._index is None or self._index_func is not func:
            self._index = StateIndex(func)
            self._index_func = func
        return self._index

    def set_func(self, func: PrimFunc) -> None:
        self.mod = self.mod.with_function(self.func_name, func)

    def replace(self, mapping, tgt_stmt: Stmt | None = None, block_sref_reuse=None) -> None:
        """Replace statements of the current function (None removes a statement from a sequence).

        ``mapping`` is ``{old: new}``, or TVM's form ``replace(src_sref, tgt_stmt)`` with a
        StmtSRef (schedule/sref.py); srefs follow their loop variable or block name, so TVM's
        ``block_sref_reuse`` is implied and ignored.
        """
        from .sref import StmtSRef  # sref.py builds on this module

        if isinstance(mapping, StmtSRef):
            mapping = {mapping.stmt: tgt_stmt}
        func = self.func
        parents = self.index.parent
        on_path: set[int] = set()
        for stmt in mapping:
            parent = parents.get(id(stmt))
            while parent is not None and id(parent) not in on_path:
                on_path.add(id(parent))
                parent = parents.get(id(parent))
        body = _Replacer({id(k): v for k, v in mapping.items()}, on_path).visit(func.body)
        self.set_func(dc_replace(func, body=body))

    def get_sref(self, stmt: Stmt):
        """TVM's ``state.get_sref``: the StmtSRef of a loop or block (schedule/sref.py)."""
        from .sref import sref_of

        return sref_of(self, stmt)

    def get_block_scope(self, block_sref):
        """TVM's ``state.get_block_scope``: the dependencies among the blocks under a scope block."""
        from .sref import block_scope

        return block_scope(self, block_sref)

    def _get_cached_flags(self, block_sref) -> CachedFlags:
        """TVM's (private, test-facing) ``state._get_cached_flags``: CachedFlags of a block's sref."""
        from .sref import cached_flags

        return cached_flags(self, block_sref)

    def parent(self, stmt: Stmt) -> Stmt | None:
        return self.index.parent.get(id(stmt))

    def ancestors(self, stmt: Stmt) -> list[Stmt]:
        """Statements enclosing ``stmt``, innermost first."""
        out = []
        parent = self.parent(stmt)
        while parent is not None:
            out.append(parent)
            parent = self.parent(parent)
        return out

    def loops_of(self, block: Block) -> list[For]:
        """The loops enclosing a block up to its parent block, outermost first."""
        loops = []
        for anc in self.ancestors(self.realize_of(block)):
            if isinstance(anc, Block):
                break
            if isinstance(anc, For):
                loops.append(anc)
        return loops[::-1]

    def realize_of(self, block: Block) -> BlockRealize:
        return self.index.realize_of_block[id(block)]

    def unique_name(self, base: str) -> str:
        """``base``, or ``base_1``, ``base_2``... if a block, parameter or buffer already has it."""
        taken = set(self.index.blocks)
        taken.update(p.name for p in self.func.params)
        for block in self.index.blocks.values():
            taken.update(b.name for b in block.alloc_buffers)
        name, n = base, 0
        while name in taken:
            n += 1
            name = f"{base}_{n}"
        return name

    def insert_beside(self, block: Block, stage: Stmt, after: bool) -> None:
        """Put ``stage`` right before (or after) the statement of ``block``'s scope that holds it."""
        realize = self.realize_of(block)
        scope = self.parent_block(realize)
        in_seq = isinstance(scope.body, SeqStmt)
        path = [realize, *self.ancestors(realize)]
        top = next(s for s in path if self.parent(s) is (scope.body if in_seq else scope))
        items = list(scope.body.seq) if in_seq else [scope.body]
        position = next(i for i, s in enumerate(items) if s is top) + (1 if after else 0)
        items.insert(position, stage)
        self.replace({scope: dc_replace(scope, body=seq(*items))})

    def parent_block(self, stmt: Stmt) -> Block:
        for anc in self.ancestors(stmt):
            if isinstance(anc, Block):
                return anc
        raise LookupError("statement has no enclosing block")
