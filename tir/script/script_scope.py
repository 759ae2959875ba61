"""Name scopes of the TVMScript builder: resolving a name and binding new ones.

``NameScopes`` is a mixin of ``_FunctionBuilder`` (script_builder.py), whose ``scopes`` stack
it reads and writes. A name is looked up in the enclosing scopes (loop variables, block
iterators, let variables, buffers), then the builtins, then the free names of the decorated
function (``extra_vars``), which must be plain constants so that no user code runs.
Assignments bind markers as declarations (``T.int32()``, ``T.alloc_buffer``, ``T.axis.*``) and
expressions as let variables whose scope is the rest of the block.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from lark import Tree

from ..buffer import Buffer
from ..expr import IterVar, PrimExpr, Range, Var, const
from ..stmt import Allocate, For, ForKind, LetStmt
from . import namespace
from .script_values import (
    _BUILTINS,
    _I_REF,
    _T_ROOT,
    _AxisDecl,
    _AxisDecls,
    _BlockFrame,
    _BufferDecl,
    _describe,
    _is_plain_constant,
    _Marker,
    _plural,
    _RegionMatch,
    _RegionView,
    _Scoped,
    _ThreadEnv,
    _ThreadLaunch,
    _TRef,
    _VarDecl,
)


class NameScopes:
    """Looks names up in the builder's scopes and binds assigned names."""

    def _e_name(self, node: Tree) -> Any:
        name = str(node.children[0])
        for scope in reversed(self.scopes):
            if name in scope:
                return self._check_loop_use(scope[name], node)
        if name in _BUILTINS:
            return _BUILTINS[name]
        if name in self.extra_vars:
            return self._free_value(name, self.extra_vars[name], node)
        raise self.error(node, f"name {name!r} is not defined", hint=self._undefined_name_hint(name))

    def _undefined_name_hint(self, name: str) -> str | None:
        """ "did you mean vi?" (a lower cutoff than difflib's: script names are short), else the names
        defined here."""
        local = list(dict.fromkeys(n for scope in self.scopes for n in scope if not n.startswith("_")))
        known = local + list(_BUILTINS) + [n for n in self.extra_vars if not n.startswith("_")]
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
        if close:
            return f"did you mean {close[0]}?"
        if local:
            shown = ", ".join(local[-12:])
            return f"names defined here: {shown}"
        return None

    def _check_loop_use(self, value: Any, node: Tree) -> Any:
        """A loop variable inside a block with iterators is ill-formed (TVM's rule): use an iterator."""
        depth = self.loop_depths.get(value) if isinstance(value, Var) else None
        if depth is None or self.binding_depth:
            return value
        inner = [f for f in self.frames[depth:] if isinstance(f, _BlockFrame) and f.iter_vars]
        if inner:
            raise self.error(
                node,
                f"block {inner[-1].name!r} uses loop variable {value.name} in its body; a block with "
                "iterators may only use its own iterators",
                hint=f"bind an iterator to {value.name} (T.axis.spatial/reduce or T.axis.remap) and use it",
            )
        return value

    @contextmanager
    def _binding_scope(self) -> Iterator[None]:
        """Block bindings and T.where are evaluated outside the block: loop variables are allowed."""
        self.binding_depth += 1
        try:
            yield
        finally:
            self.binding_depth -= 1

    def _free_value(self, name: str, value: Any, node: Tree) -> Any:
        if value is namespace.T:
            return _T_ROOT
        if value is namespace.I:
            return _I_REF
        if isinstance(value, namespace.ScriptName):
            return _TRef(tuple(value.script_path.split(".")))
        if _is_plain_constant(value):
            return value
        raise self.error(
            node,
            f"{name!r} is a {type(value).__name__} object from the enclosing Python scope, "
            "which a script cannot use",
            hint="only int, float, bool, str and tuples of those are taken from outside; "
            "pass anything else as a parameter",
        )

    def _bind(self, name: str, value: Any, value_node: Tree) -> _Scoped | None:
        scope = self.scopes[-1]
        if isinstance(value, _VarDecl):
            var = self.predeclared.get(id(value_node))
            scope[name] = var if var is not None else Var(name, value.dtype)
            return None
        if isinstance(value, _BufferDecl):
            return self._declare_buffer(name, value, value_node)
        if isinstance(value, _RegionMatch):
            if not any(isinstance(f, _BlockFrame) for f in self.frames):
                raise self.error(
                    value_node,
                    f"T.match_buffer of a region of {value.region.buffer.name} belongs inside a block",
                    hint="match the function's T.handle parameters at the top level instead",
                )
            view = Buffer(name, value.shape, value.dtype, value.scope)
            scope[name] = _RegionView(name, value.region, view)
            return None
        if isinstance(value, _ThreadEnv):
            var = scope[name] = Var(name, "int32")
            self.thread_tags[var] = value.tag
            return None
        if isinstance(value, _ThreadLaunch) and value.var is None:
            var = scope[name] = Var(name, value.extent.dtype)
            return self._launch(var, value)
        if isinstance(value, _AxisDecls) and len(value.axes) == 1:
            value = value.axes[0]
        if isinstance(value, _AxisDecl):
            self._declare_axis(name, value, value_node)
            return None
        if isinstance(value, _Marker):
            raise self._misuse(value, value_node)
        if isinstance(value, PrimExpr):
            return self._let(name, value.dtype, value)
        scope[name] = value
        return None

    def _unpack(self, target: Tree, value: Any, value_node: Tree) -> None:
        names = self._target_names(target)
        if isinstance(value, _AxisDecls):
            values: tuple | list = value.axes
        elif isinstance(value, (tuple, list)):
            values = value
        else:
            raise self.error(
                value_node, f"cannot unpack {_describe(value)} into {_plural(len(names), 'name')}"
            )
        if len(values) != len(names):
            raise self.error(
                target,
                f"{_plural(len(names), 'name')} on the left but {_plural(len(values), 'value')} on the right",
            )
        for (name, _), item in zip(names, values):
            if isinstance(item, PrimExpr):
                raise self.error(
                    target, "unpacking expressions into names is not supported; assign them one by one"
                )
            self._bind(name, item, value_node)

    def _launch(self, var: Var, launch: _ThreadLaunch) -> _Scoped:
        """A launched thread is a thread-bound loop (TVM's thread_extent attribute) over what follows."""
        self.loop_ranges[var] = Range(const(0, var.dtype), launch.extent)
        self.loop_depths[var] = len(self.frames)
        tag = launch.tag
        return _Scoped(
            lambda body: For(var, const(0, var.dtype), launch.extent, ForKind.THREAD_BINDING, body, tag)
        )

    def _let(self, name: str, dtype: str, value: PrimExpr) -> _Scoped:
        var = Var(name, dtype)
        self.scopes[-1][name] = var
        return _Scoped(lambda body: LetStmt(var, value, body))

    def _declare_axis(self, name: str, decl: _AxisDecl, node: Tree) -> None:
        frame = self._block_frame(decl.name, node)
        var = Var(name, decl.value.dtype)
        frame.iter_vars.append(IterVar(var, decl.dom, decl.kind))
        frame.iter_values.append(decl.value)
        frame.axis_nodes.append(node)
        self.scopes[-1][name] = var

    def _declare_buffer(self, name: str, decl: _BufferDecl, node: Tree) -> _Scoped | None:
        buffer = Buffer(name, decl.shape, decl.dtype, decl.scope, **dict(decl.layout))
        self.scopes[-1][name] = buffer
        if decl.kind == "decl":
            return _Scoped(lambda body: Allocate(buffer, body))
        if decl.kind == "alloc":
            frame = next((f for f in reversed(self.frames) if isinstance(f, _BlockFrame)), None)
            (frame.alloc_buffers if frame is not None else self.root_allocs).append(buffer)
            return None
        if self.frames:
            raise self.error(node, "T.match_buffer(...) belongs at the top level of the function body")
        self.params[self.params.index(decl.param)] = buffer
        return None
