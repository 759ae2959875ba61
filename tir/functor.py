"""The one visitor base and the one mutator base for IR trees, and helpers on them.

Both walk every child node generically (expressions, statements, ranges, iterators,
buffer regions, tuples of these); override ``visit_<ClassName>`` to act on a node
kind. A mutator returns the very same object when nothing below it changed, so
rewrites can check ``new is old`` cheaply. Buffers are leaves: they are identities,
so a pass that changes one maps it explicitly (see ``substitute_buffers``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import fields, replace

from .buffer import Buffer, BufferRegion
from .expr import BufferLoad, BufferPointer, FloatImm, IntImm, IterVar, PrimExpr, Range, Var
from .stmt import Allocate, Block, BufferStore, Stmt

_NODE_TYPES = (PrimExpr, Stmt, Range, IterVar, BufferRegion)
# Fields that never hold child nodes (buffers are identities, handled by name).
_LEAF_FIELDS = frozenset({"dtype", "name", "kind", "lanes", "op", "thread_tag", "annotations", "buffer"})
# Field types that never hold child nodes either (constants' values, a block's allocated buffers).
_LEAF_TYPES = frozenset({"int", "float", "str", "bool", "tuple[Buffer, ...]"})
_child_fields: dict[type, tuple[str, ...]] = {}


def child_fields(cls: type) -> tuple[str, ...]:
    """Names of a node class's fields that can hold child nodes."""
    names = _child_fields.get(cls)
    if names is None:
        names = tuple(
            f.name for f in fields(cls) if f.name not in _LEAF_FIELDS and str(f.type) not in _LEAF_TYPES
        )
        _child_fields[cls] = names
    return names


_init_fields: dict[type, tuple[str, ...]] = {}


def _rebuild(node, changes: dict):
    """``dataclasses.replace(node, **changes)`` for IR nodes (every field is an init field)."""
    cls = type(node)
    names = _init_fields.get(cls)
    if names is None:
        names = _init_fields[cls] = tuple(f.name for f in fields(cls) if f.init)
    return cls(**{name: changes[name] if name in changes else getattr(node, name) for name in names})


def _learn_handler(visitor_cls: type, node_cls: type):
    """``visitor_cls.visit_<node class name>`` or None, remembered in the class's own table."""
    handler = getattr(visitor_cls, "visit_" + node_cls.__name__, None)
    visitor_cls._visit_table[node_cls] = handler
    return handler


_UNKNOWN = object()


class Visitor:
    """Walks a tree in pre-order. ``visit(node)`` dispatches to ``visit_<Class>``."""

    # Node class -> visit_<Class> method or None, one table per visitor class (a hot path).
    _visit_table: dict[type, Callable | None] = {}

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        cls._visit_table = {}

    def visit(self, node) -> None:
        handler = self._visit_table.get(type(node), _UNKNOWN)
        if handler is _UNKNOWN:
            handler = _learn_handler(type(self), type(node))
        if handler is not None:
            handler(self, node)
        else:
            self.generic_visit(node)

    def generic_visit(self, node) -> None:
        cls = type(node)
        names = _child_fields.get(cls)
        for name in child_fields(cls) if names is None else names:
            value = getattr(node, name)
            if value.__class__ is tuple:
                for item in value:
                    if isinstance(item, _NODE_TYPES):
                        self.visit(item)
            elif isinstance(value, _NODE_TYPES):
                self.visit(value)


class Mutator:
    """Rebuilds a tree bottom-up. ``visit_<Class>`` returns the replacement node."""

    _visit_table: dict[type, Callable | None] = {}

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        cls._visit_table = {}

    def visit(self, node):
        handler = self._visit_table.get(type(node), _UNKNOWN)
        if handler is _UNKNOWN:
            handler = _learn_handler(type(self), type(node))
        if handler is not None:
            return handler(self, node)
        return self.generic_visit(node)

    def generic_visit(self, node):
        changes = None
        cls = type(node)
        names = _child_fields.get(cls)
        visit = self.visit
        for name in child_fields(cls) if names is None else names:
            value = getattr(node, name)
            if value.__class__ is tuple:
                new_items = None  # a list copy of the tuple from the first changed item on
                for position, item in enumerate(value):
                    if isinstance(item, _NODE_TYPES):
                        new_item = visit(item)
                        if new_item is not item:
                            if new_items is None:
                                new_items = list(value)
                            new_items[position] = new_item
                if new_items is not None:
                    changes = changes or {}
                    changes[name] = tuple(new_items)
            elif isinstance(value, _NODE_TYPES):
                new_value = visit(value)
                if new_value is not value:
                    changes = changes or {}
                    changes[name] = new_value
        return _rebuild(node, changes) if changes else node


class StmtMutator(Mutator):
    """A Mutator whose handlers are all for statements: expressions, and the ranges, iterators
    and regions of a statement, come back as they are without being walked (none holds a
    statement), which makes block- and loop-level passes proportional to the statements."""

    def visit(self, node):
        return super().visit(node) if isinstance(node, Stmt) else node


class _PostOrder(Visitor):
    def __init__(self, callback: Callable):
        self.callback = callback

    def visit(self, node) -> None:
        self.generic_visit(node)
        self.callback(node)


def post_order_visit(node, callback: Callable) -> None:
    """Call ``callback`` on every node below ``node`` (children before parents)."""
    _PostOrder(callback).visit(node)


class _Substituter(Mutator):
    def __init__(self, vmap: dict[Var, PrimExpr]):
        self.vmap = vmap

    def visit(self, node):
        # The leaves, most of what an index holds, without the generic dispatch.
        cls = type(node)
        if cls is Var:
            return self.vmap.get(node, node)
        if cls is IntImm or cls is FloatImm:
            return node
        return super().visit(node)

    def visit_Var(self, var: Var) -> PrimExpr:
        return self.vmap.get(var, var)


def substitute(node, vmap: dict[Var, PrimExpr]):
    """Replace uses of variables by expressions; returns ``node`` itself if none occur."""
    if not vmap:
        return node
    return _Substituter(vmap).visit(node)


def stmts_pre_order(stmt) -> Iterator[Stmt]:
    """Every statement of ``stmt`` (itself first) in the order a Visitor reaches them, without
    walking expressions: for a check that only needs the loops or blocks of a subtree."""
    stack = [stmt]
    while stack:
        node = stack.pop()
        yield node
        children = []
        for name in child_fields(type(node)):
            value = getattr(node, name)
            if value.__class__ is tuple:
                children.extend(item for item in value if isinstance(item, Stmt))
            elif isinstance(value, Stmt):
                children.append(value)
        stack.extend(reversed(children))


class _BufferSubstituter(Mutator):
    def __init__(self, bmap: dict[Buffer, Buffer]):
        self.bmap = bmap

    def visit_BufferLoad(self, load: BufferLoad):
        load = self.generic_visit(load)
        new = self.bmap.get(load.buffer)
        return replace(load, buffer=new) if new is not None else load

    def visit_BufferStore(self, store: BufferStore):
        store = self.generic_visit(store)
        new = self.bmap.get(store.buffer)
        return replace(store, buffer=new) if new is not None else store

    def visit_BufferPointer(self, pointer: BufferPointer):
        pointer = self.generic_visit(pointer)
        new = self.bmap.get(pointer.buffer)
        return replace(pointer, buffer=new) if new is not None else pointer

    def visit_BufferRegion(self, region: BufferRegion):
        region = self.generic_visit(region)
        new = self.bmap.get(region.buffer)
        return replace(region, buffer=new) if new is not None else region

    def visit_Block(self, block: Block):
        block = self.generic_visit(block)
        if not any(b in self.bmap for b in block.alloc_buffers):
            return block
        return replace(block, alloc_buffers=tuple(self.bmap.get(b, b) for b in block.alloc_buffers))

    def visit_Allocate(self, alloc: Allocate):
        alloc = self.generic_visit(alloc)
        new = self.bmap.get(alloc.buffer)
        return replace(alloc, buffer=new) if new is not None else alloc


def substitute_buffers(node, bmap: dict[Buffer, Buffer]):
    """Replace the buffers in ``bmap`` everywhere ``node`` names them: loads, stores, pointers,
    regions, a block's allocations and ``Allocate`` statements (a buffer changed in place, its
    dtype, scope or layout, stays allocated where it was)."""
    if not bmap:
        return node
    return _BufferSubstituter(bmap).visit(node)


class _VarFinder(Visitor):
    def __init__(self, var_pred: Callable[[Var], bool]):
        self.var_pred = var_pred
        self.found = False

    def visit_Var(self, var: Var) -> None:
        if self.var_pred(var):
            self.found = True

    def visit(self, node) -> None:
        if not self.found:
            super().visit(node)


def uses_var(node, var_pred: Callable[[Var], bool]) -> bool:
    """Whether any Var in ``node`` satisfies ``var_pred``."""
    finder = _VarFinder(var_pred)
    finder.visit(node)
    return finder.found


class _VarCollector(Visitor):
    def __init__(self):
        self.found: set[Var] = set()

    def visit_Var(self, var: Var) -> None:
        self.found.add(var)


def collect_vars(node) -> set[Var]:
    """Every Var used in ``node``."""
    collector = _VarCollector()
    collector.visit(node)
    return collector.found
