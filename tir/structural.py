"""Structural equality and hashing of IR: same program up to the names and identities of things.

Schedule tests compare a scheduled function with an expected script, round-trip tests
compare a function with its printed-and-parsed copy, and the tuner keys its database by
``structural_hash``. All three go through one encoding: a walk of the tree that writes a
flat list of tokens (node classes, dtypes, constants, loop kinds, ...) in which a bound
variable or buffer is written as the index of its binding site (function parameters,
symbolic shape variables at their first appearance in parameter shapes, loop and block
iterators, let variables, allocated buffers). Block names are hints and are not written,
as in TVM. Two trees are equal exactly when their token
lists are, and the hash is a stable digest of the list (blake2b, the same in every process),
so equal trees always hash alike. ``assert_structural_equal`` re-walks both trees keeping
track of which node wrote each token, to report the path of the first difference and print
both scripts with it marked.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_right
from dataclasses import fields
from enum import Enum
from typing import Any

from .buffer import Buffer, BufferRegion
from .expr import FloatImm, IntImm, IterVar, Let, PrimExpr, Range, Var
from .function import IRModule, PrimFunc
from .stmt import Allocate, Block, For, LetStmt, Stmt

__all__ = ["structural_equal", "structural_hash", "assert_structural_equal"]

_NODE_TYPES = (PrimExpr, Stmt, Range, IterVar, BufferRegion, PrimFunc, IRModule, Buffer)
_field_names: dict[type, tuple[str, ...]] = {}


def structural_equal(a: Any, b: Any, map_free_vars: bool = False) -> bool:
    """Whether ``a`` and ``b`` are the same program up to variable, buffer and block names.

    Variables and buffers are matched by where they are bound; free ones (bound outside
    ``a`` and ``b``) must be the very same objects, unless ``map_free_vars`` is set, in
    which case they are matched in order of first appearance.
    """
    if a is b:
        return True
    return _Encoder(map_free_vars).encode(a) == _Encoder(map_free_vars).encode(b)


def structural_hash(node: Any, map_free_vars: bool = False) -> int:
    """A hash of ``node``'s structure, equal for structurally equal nodes, stable across processes.

    It ignores names (block names too) and object identities (free variables count by order of first
    appearance), and is a non-negative 63-bit integer so that it fits a SQLite INTEGER.
    """
    tokens = _Encoder(map_free_vars=True).encode(node)
    digest = hashlib.blake2b(repr(tokens).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def assert_structural_equal(a: Any, b: Any, map_free_vars: bool = False) -> None:
    """Raise AssertionError naming the first difference between ``a`` and ``b``, if any.

    The message gives the path of the differing node from the root (for example
    ``body.block.body[2].value.b``), both differing sub-nodes, and both scripts with the
    statement holding the difference marked.
    """
    if structural_equal(a, b, map_free_vars):
        return
    lhs, rhs = _TracingEncoder(map_free_vars), _TracingEncoder(map_free_vars)
    lhs_tokens, rhs_tokens = lhs.encode(a), rhs.encode(b)
    index = next(
        (i for i, (x, y) in enumerate(zip(lhs_tokens, rhs_tokens)) if x != y),
        min(len(lhs_tokens), len(rhs_tokens)),
    )
    lhs_chain, rhs_chain = lhs.chain_at(index), rhs.chain_at(index)
    path = _path_text(lhs_chain) or "<root>"
    parts = [f"structural mismatch at {path}"]
    if lhs_chain.parent is not None or rhs_chain.parent is not None:
        parts += ["lhs:", _indent(_describe(lhs_chain.node)), "rhs:", _indent(_describe(rhs_chain.node))]
    differing = lhs_tokens[index : index + 1] + rhs_tokens[index : index + 1]
    same_kind = type(lhs_chain.node) is type(rhs_chain.node)
    if same_kind and len(differing) == 2 and all(isinstance(t, str) for t in differing):
        parts.append(f"they differ in: {differing[0]!r} vs {differing[1]!r}")
    parts += [
        "lhs script:",
        _indent(_script(a, _mark_for(lhs_chain, f"first mismatch (lhs), at {path}"))),
        "rhs script:",
        _indent(_script(b, _mark_for(rhs_chain, f"first mismatch (rhs), at {path}"))),
    ]
    raise AssertionError("\n".join(parts))


# ---------------------------------------------------------------- the encoding


def _fields_of(cls: type) -> tuple[str, ...]:
    """Every field of a node class (classes with a ``name`` that equality ignores have handlers)."""
    names = _field_names.get(cls)
    if names is None:
        names = _field_names[cls] = tuple(f.name for f in fields(cls))
    return names


def _float_token(value: float) -> str:
    value = float(value) + 0.0  # -0.0 == 0.0, so they must encode alike
    return value.hex() if value == value else "nan"


class _Encoder:
    """Writes a tree as a flat token list; bound variables and buffers become binding indices."""

    def __init__(self, map_free_vars: bool):
        self.map_free_vars = map_free_vars
        self.tokens: list = []
        self._bound: dict[object, int] = {}
        self._binding_count = 0
        self._defining_shape_vars = False
        self._handlers = {
            Var: self._var,
            IntImm: self._int,
            FloatImm: self._float,
            For: self._for,
            Block: self._block,
            LetStmt: self._let,
            Let: self._let,
            Allocate: self._allocate,
            PrimFunc: self._func,
            IRModule: self._module,
            Buffer: self._buffer_definition,
            IterVar: self._iter_var,
            _Definition: self._var_definition,
        }

    def encode(self, node: Any) -> list:
        if isinstance(node, _NODE_TYPES):
            self.visit(node, None)
        else:
            self._literal(node)
        return self.tokens

    def visit(self, node: Any, label: Any) -> None:
        handler = self._handlers.get(type(node))
        if handler is None:
            self._generic(node)
        else:
            handler(node)

    def _generic(self, node: Any) -> None:
        self.tokens.append(type(node).__name__)
        for name in _fields_of(type(node)):
            self._field(getattr(node, name), name)

    def _field(self, value: Any, label: Any) -> None:
        if isinstance(value, _NODE_TYPES):
            if isinstance(value, Buffer):
                self._buffer_use(value)
            else:
                self.visit(value, label)
        elif isinstance(value, tuple):
            self.tokens.append(len(value))
            for i, item in enumerate(value):
                self._field(item, (label, i))
        else:
            self._literal(value)

    def _literal(self, value: Any) -> None:
        """Plain values (annotations, attributes, names of kinds), tagged with their type."""
        tokens = self.tokens
        if isinstance(value, str):
            tokens += ("s", value)
        elif isinstance(value, bool):
            tokens += ("b", int(value))
        elif isinstance(value, int):
            tokens += ("i", value)
        elif isinstance(value, float):
            tokens += ("f", _float_token(value))
        elif value is None:
            tokens.append("None")
        elif isinstance(value, Enum):
            tokens += ("e", str(value.value))
        elif isinstance(value, dict):
            tokens += ("dict", len(value))
            for key in sorted(value, key=repr):
                self._literal(key)
                self._field(_plain_int(value[key]), key)
        elif isinstance(value, (list, tuple)):
            tokens += ("list", len(value))
            for i, item in enumerate(value):
                self._field(_plain_int(item), i)
        elif isinstance(value, _NODE_TYPES):
            self._field(value, None)
        else:
            tokens += ("repr", repr(value))

    # ------------------------------------------------------------ variables and buffers

    def _define(self, node: Var | Buffer) -> None:
        """A binding site: later uses of ``node`` write this index (re-binding starts afresh)."""
        index = self._binding_count
        self._binding_count += 1
        self._bound[node] = index
        self.tokens.append(index)

    def _var(self, var: Var) -> None:
        index = self._bound.get(var)
        if index is not None:
            self.tokens += ("v", index)
        elif self.map_free_vars or self._defining_shape_vars:
            self.tokens += ("def", var.dtype)
            self._define(var)
        else:
            self.tokens += ("free", id(var))

    def _define_var(self, var: Var, label: str) -> None:
        """Bind a variable; visited as a node of its own so a dtype mismatch has a path."""
        self.visit(_Definition(var), label)

    def _var_definition(self, definition: _Definition) -> None:
        self.tokens += ("def", definition.target.dtype)
        self._define(definition.target)

    def _buffer_use(self, buffer: Buffer) -> None:
        index = self._bound.get(buffer)
        if index is not None:
            self.tokens += ("buf", index)
        elif self.map_free_vars:
            self._buffer_definition(buffer)
        else:
            self.tokens += ("free_buf", id(buffer))

    def _buffer_definition(self, buffer: Buffer) -> None:
        self.tokens += ("Buffer", buffer.dtype, buffer.scope, len(buffer.shape))
        for i, extent in enumerate(buffer.shape):
            self.visit(extent, ("shape", i))
        if buffer.strides or buffer.elem_offset is not None or buffer.offset_factor or buffer.align:
            # Only buffers with a layout of their own (padded, strided, offset) have these tokens:
            # row-major ones hash as before, so tuning databases keep their keys.
            self.tokens += ("layout", len(buffer.strides), buffer.offset_factor, buffer.align)
            defining, self._defining_shape_vars = self._defining_shape_vars, True
            for i, stride in enumerate(buffer.strides):
                self.visit(stride, ("strides", i))
            if buffer.elem_offset is not None:
                self.visit(buffer.elem_offset, "elem_offset")
            self._defining_shape_vars = defining
        if buffer.axis_separators:  # only when set, so unseparated buffers hash as before
            self.tokens += ("axis_separators", *buffer.axis_separators)
        self._define(buffer)

    # ------------------------------------------------------------ binding nodes

    def _int(self, e: IntImm) -> None:
        self.tokens += ("IntImm", e.dtype, int(e.value))

    def _float(self, e: FloatImm) -> None:
        self.tokens += ("FloatImm", e.dtype, _float_token(e.value))

    def _for(self, loop: For) -> None:
        self.tokens += ("For", loop.kind.value, loop.thread_tag)
        self.visit(loop.min, "min")
        self.visit(loop.extent, "extent")
        self._define_var(loop.loop_var, "loop_var")
        self._literal(loop.annotations)
        self.visit(loop.body, "body")

    def _block(self, block: Block) -> None:
        # A block's name is a hint, as in TVM: blocks that differ only in name are equal.
        self.tokens += ("Block", len(block.iter_vars))
        for i, iv in enumerate(block.iter_vars):
            self.visit(iv, ("iter_vars", i))
        self.tokens.append(len(block.alloc_buffers))
        for i, buffer in enumerate(block.alloc_buffers):
            self.visit(buffer, ("alloc_buffers", i))
        self._field(block.reads, "reads")
        self._field(block.writes, "writes")
        self._field(block.init, "init")
        self._literal(block.annotations)
        self.visit(block.body, "body")

    def _iter_var(self, iv: IterVar) -> None:
        self.tokens += ("IterVar", iv.kind.value)
        self.visit(iv.dom, "dom")
        self._define_var(iv.var, "var")

    def _let(self, let: LetStmt | Let) -> None:
        self.tokens.append(type(let).__name__)
        self.visit(let.value, "value")
        self._define_var(let.var, "var")
        self.visit(let.body, "body")

    def _allocate(self, alloc: Allocate) -> None:
        self.tokens.append("Allocate")
        self.visit(alloc.buffer, "buffer")
        self.visit(alloc.body, "body")

    def _func(self, func: PrimFunc) -> None:
        # Scalar parameters first, so a buffer shape naming one refers to it, not defines it.
        self.tokens += ("PrimFunc", len(func.params))
        for i, param in enumerate(func.params):
            if isinstance(param, Var):
                self._define_var(param, ("params", i))
            else:
                self.tokens.append("buffer_param")
        self._defining_shape_vars = True
        for i, param in enumerate(func.params):
            if isinstance(param, Buffer):
                self.visit(param, ("params", i))
        self._defining_shape_vars = False
        self._literal(func.attrs)
        self.visit(func.body, "body")

    def _module(self, mod: IRModule) -> None:
        self.tokens += ("IRModule", len(mod.functions))
        for name in sorted(mod.functions):
            self.tokens.append(name)
            self.visit(mod.functions[name], ("functions", name))


class _Definition:
    """A variable at its binding site, as a node of its own in the encoding's walk."""

    __slots__ = ("target",)

    def __init__(self, target: Var):
        self.target = target


class _Chain:
    """One step of the path from the root to the node being encoded."""

    __slots__ = ("parent", "label", "node")

    def __init__(self, parent: _Chain | None, label: Any, node: Any):
        self.parent, self.label, self.node = parent, label, node


class _TracingEncoder(_Encoder):
    """An encoder that remembers which node wrote each token (only for failure reports)."""

    def __init__(self, map_free_vars: bool):
        super().__init__(map_free_vars)
        self._chain: _Chain | None = None
        self._positions: list[int] = []
        self._chains: list[_Chain | None] = []

    def visit(self, node: Any, label: Any) -> None:
        parent = self._chain
        self._enter(_Chain(parent, label, node.target if isinstance(node, _Definition) else node))
        super().visit(node, label)
        self._enter(parent)

    def _enter(self, chain: _Chain | None) -> None:
        self._chain = chain
        self._positions.append(len(self.tokens))
        self._chains.append(chain)

    def chain_at(self, index: int) -> _Chain:
        """The innermost node that wrote token ``index`` (the last node, past the end)."""
        at = bisect_right(self._positions, index) - 1
        while at > 0 and self._chains[at] is None:
            at -= 1
        return self._chains[max(at, 0)]


# ---------------------------------------------------------------- failure report


def _path_text(chain: _Chain) -> str:
    labels = []
    while chain is not None and chain.parent is not None:
        labels.append(chain.label)
        chain = chain.parent
    parts = []
    for label in reversed(labels):
        if isinstance(label, tuple):
            name, key = label
            key_text = f'["{key}"]' if isinstance(key, str) else f"[{key}]"
            parts.append(key_text if name == "seq" else f".{name}{key_text}")
        else:
            parts.append(f".{label}")
    return "".join(parts).lstrip(".")


def _mark_for(chain: _Chain, message: str) -> dict:
    """Mark the innermost statement or buffer on the path (expressions may be shared objects)."""
    fallback = None
    while chain is not None:
        if isinstance(chain.node, (Stmt, Buffer)):
            return {chain.node: message}
        if fallback is None and isinstance(chain.node, PrimExpr):
            fallback = chain.node
        chain = chain.parent
    return {fallback: message} if fallback is not None else {}


def _describe(node: Any, max_lines: int = 6) -> str:
    if isinstance(node, Var):
        return f"{node.name} ({node.dtype})"
    text = _script(node, None)
    lines = text.splitlines()
    return "\n".join(lines[:max_lines] + (["..."] if len(lines) > max_lines else []))


def _script(node: Any, marks: dict | None) -> str:
    from .script.printer import to_script

    try:
        return to_script(node, marks)
    except TypeError:
        return repr(node)


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


def _plain_int(value: Any) -> Any:
    """An int32 constant inside an annotation is the plain int TVM stores for it (``[T.int32(0)]``
    and ``[0]`` are the same annotation)."""
    if isinstance(value, IntImm) and value.dtype == "int32":
        return int(value.value)
    return value
