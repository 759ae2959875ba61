"""TVM's view of the schedule state: statement references, block scopes and their dependencies.

TVM users reach into a schedule with ``sch.get_sref(rv)`` (a ``StmtSRef``: the loop or block
now, and its parent reference) and ``sch.state`` (``get_sref``, ``get_block_scope``, and
``replace(src_sref, tgt_stmt)``). Our nodes are immutable and found again by key (a loop by
its variable, a block by its name, as handles are), so an sref is that key plus the state: it
stays valid across rewrites that keep its node, like TVM's. ``BlockScope`` lists the
dependencies between the blocks directly under a scope block in program order: read after
write (RAW), write after write (WAW), write after read (WAR), as TVM's ``DepKind``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from tir import Block, BlockRealize, For, Stmt, Var
from tir.arith import Analyzer

from .analysis import child_blocks
from .block_properties import affine_binding_problem, region_cover_problem, stage_pipeline_problem
from .errors import NotFoundError, StaleHandleError


class StmtSRef:
    """A reference to a loop or block of the state, valid while that node exists."""

    def __init__(self, state, key: Var | str):
        self._state = state
        self._key = key

    @property
    def stmt(self) -> For | Block:
        """The loop or block now (rewrites replace nodes; the sref follows its loop or block)."""
        index = self._state.index
        node = index.loops.get(self._key) if isinstance(self._key, Var) else index.blocks.get(self._key)
        if node is None:
            what = f"loop {self._key.name}" if isinstance(self._key, Var) else f"block {self._key!r}"
            raise StaleHandleError(f"the sref refers to {what}, which no longer exists")
        return node

    @property
    def parent(self) -> StmtSRef | None:
        """The nearest enclosing loop or block; None for the root block."""
        stmt = self.stmt
        start = self._state.realize_of(stmt) if isinstance(stmt, Block) else stmt
        for node in self._state.ancestors(start):
            if isinstance(node, (For, Block)):
                return sref_of(self._state, node)
        return None

    def _identity(self) -> tuple[int, int | str]:
        """What makes two srefs the same: the state, and the loop's variable (by identity, as IR
        nodes compare) or the block's name (by value: equal names are one block)."""
        return id(self._state), id(self._key) if isinstance(self._key, Var) else self._key

    def __eq__(self, other) -> bool:
        return isinstance(other, StmtSRef) and other._identity() == self._identity()

    def __hash__(self) -> int:
        return hash(self._identity())

    def same_as(self, other) -> bool:
        """TVM's identity test: the same loop or block of the same state."""
        return self == other

    def __repr__(self) -> str:
        return f"StmtSRef({self._key.name if isinstance(self._key, Var) else repr(self._key)})"


def sref_of(state, node: Stmt) -> StmtSRef:
    """The sref of a loop or block of the state's current function."""
    if isinstance(node, BlockRealize):
        node = node.block
    if isinstance(node, For):
        if state.index.loops.get(node.loop_var) is not node:
            raise NotFoundError(f"loop {node.loop_var.name} is not in function {state.func_name!r}")
        return StmtSRef(state, node.loop_var)
    if isinstance(node, Block):
        if state.index.name_counts.get(node.name, 0) > 1:
            raise NotFoundError(
                f"Found {state.index.name_counts[node.name]} blocks with the name: {node.name!r}; an sref "
                "names one block, so it needs a unique name"
            )
        if state.index.blocks.get(node.name) is not node:
            raise NotFoundError(f"block {node.name!r} is not in function {state.func_name!r}")
        return StmtSRef(state, node.name)
    raise TypeError(f"an sref refers to a loop or a block, not {type(node).__name__}")


class DepKind(Enum):
    """How a later block depends on an earlier one of the same scope (TVM's names)."""

    RAW = 0  # reads what the earlier one writes
    WAW = 1  # writes what the earlier one writes
    WAR = 2  # writes what the earlier one reads


@dataclass(frozen=True)
class Dependency:
    src: StmtSRef
    dst: StmtSRef
    kind: DepKind


class BlockScope:
    """The dependencies among the blocks directly under one scope block, in program order."""

    def __init__(self, state, blocks: list[Block]):
        self.deps: list[Dependency] = []
        for position, later in enumerate(blocks):
            later_reads = {r.buffer for r in later.reads}
            later_writes = {w.buffer for w in later.writes}
            for earlier in blocks[:position]:
                earlier_writes = {w.buffer for w in earlier.writes}
                earlier_reads = {r.buffer for r in earlier.reads}
                src, dst = sref_of(state, earlier), sref_of(state, later)
                if later_reads & earlier_writes:
                    self.deps.append(Dependency(src, dst, DepKind.RAW))
                if later_writes & earlier_writes:
                    self.deps.append(Dependency(src, dst, DepKind.WAW))
                if later_writes & earlier_reads:
                    self.deps.append(Dependency(src, dst, DepKind.WAR))

    def get_deps_by_src(self, block_sref: StmtSRef) -> list[Dependency]:
        return [dep for dep in self.deps if dep.src == block_sref]

    def get_deps_by_dst(self, block_sref: StmtSRef) -> list[Dependency]:
        return [dep for dep in self.deps if dep.dst == block_sref]


def block_scope(state, block_sref: StmtSRef) -> BlockScope:
    """The scope of the blocks directly under ``block_sref``'s block."""
    block = block_sref.stmt
    if not isinstance(block, Block):
        raise TypeError(f"get_block_scope takes the sref of a block, not of {block_sref!r}")
    return BlockScope(state, child_blocks(block))


def cached_flags(state, block_sref: StmtSRef):
    """TVM's CachedFlags of a block: affine bindings (in the loops of its scope), region cover (its
    reads of buffers written earlier in its scope are covered), stage pipeline (of the scope it
    roots). The root block has no bindings and no scope around it: both are true."""
    from .state import CachedFlags  # state.py imports this module lazily

    block = block_sref.stmt
    if not isinstance(block, Block):
        raise TypeError(f"cached flags belong to blocks, not to {block_sref!r}")
    realize = state.realize_of(block)
    affine, covered = True, True
    if block_sref.parent is not None:
        affine = affine_binding_problem(state, realize) is None
        siblings = child_blocks(state.parent_block(realize))
        position = next(i for i, b in enumerate(siblings) if b is block)
        covered = region_cover_problem(state, siblings, position, Analyzer()) is None
    return CachedFlags(affine, covered, stage_pipeline_problem(state, block) is None)
