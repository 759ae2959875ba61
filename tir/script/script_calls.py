"""The ``T.*`` calls of TVMScript that shape the program: blocks, buffers, variables and loops.

``ScriptCalls`` is a mixin of ``_FunctionBuilder`` (script_builder.py) that adds the expression
calls of script_expr_calls.py. Its ``_t_*`` handlers take the call and its argument trees and
return markers (script_values.py) that a statement consumes: a block or init context, a block
iterator, a directive for the enclosing block, a buffer or variable to declare, a loop to open.
``_HANDLERS`` maps every script name of namespace.py to its handler (checked at import) and
``_signature`` gives the arguments script_exprs.py checks a call against.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from lark import Tree

from .. import dtype as _dt
from ..arith import Analyzer
from ..buffer import Buffer, check_axis_separators, normalize_scope
from ..expr import IntImm, IterKind, PrimExpr, Range, Var, const
from ..stmt import THREAD_TAGS, ForKind
from . import namespace
from .script_expr_calls import ExpressionCalls
from .script_values import (
    _as_index,
    _AxisDecl,
    _AxisDecls,
    _BufferDecl,
    _BufferSpec,
    _Call,
    _Context,
    _describe,
    _Directive,
    _extent,
    _GridSpec,
    _index_dtype,
    _LoopSpec,
    _plural,
    _python_constant,
    _RegionMatch,
    _ThreadEnv,
    _ThreadLaunch,
    _TRef,
    _VarDecl,
)

_LAYOUT_KEYWORDS = ("strides", "elem_offset", "offset_factor", "align", "axis_separators")
# A view of a region keeps the source's layout: only the keywords that cannot change it.
_REGION_MATCH_KEYWORDS = ("offset_factor", "align", "axis_separators")
_LOOP_KINDS = {
    "T.serial": ForKind.SERIAL,
    "T.parallel": ForKind.PARALLEL,
    "T.vectorized": ForKind.VECTORIZED,
    "T.unroll": ForKind.UNROLLED,
}


class ScriptCalls(ExpressionCalls):
    """Handlers of the T.* calls, with the helpers that check their arguments."""

    # ------------------------------------------------------------ argument helpers
    @staticmethod
    def _dtype_of_ref(value: Any) -> str | None:
        if isinstance(value, _TRef) and len(value.path) == 1:
            name = value.path[0]
            if name in namespace.T_DTYPES or name == "handle":
                return name
        return None

    def _str(self, node: Tree, what: str) -> str:
        value = self._value(node)
        if not isinstance(value, str):
            raise self.error(node, f"{what} must be a string, not {_describe(value)}")
        return value

    def _dtype(self, node: Tree) -> str:
        value = self._value(node)
        dtype = self._dtype_of_ref(value) if isinstance(value, _TRef) else value
        if not isinstance(dtype, str):
            raise self.error(node, f"a dtype is a string such as 'float32', not {_describe(value)}")
        try:
            return _dt.check(dtype)
        except ValueError as exc:
            raise self.error(node, str(exc)) from None

    def _scope(self, node: Tree) -> str:
        try:
            return normalize_scope(self._str(node, "a storage scope"))
        except ValueError as exc:
            raise self.error(node, str(exc)) from None

    def _shape(self, node: Tree) -> tuple[PrimExpr, ...]:
        value = self._value(node)
        dims = value if isinstance(value, (tuple, list)) else (value,)
        shape = []
        for dim in dims:
            if isinstance(dim, int) and not isinstance(dim, bool):
                shape.append(const(dim))
            elif isinstance(dim, PrimExpr) and _dt.is_integer(dim.dtype):
                shape.append(dim)
            else:
                raise self.error(node, f"a buffer shape holds integers, not {_describe(dim)}")
        return tuple(shape)

    def _constant_dict(self, node: Tree, what: str) -> dict:
        value = self._value(node)
        if not isinstance(value, dict) or not all(isinstance(key, str) for key in value):
            raise self.error(node, f'{what} takes a dict with string keys, such as {{"key": 1}}')
        return {key: _python_constant(item) for key, item in value.items()}

    def _int_value(self, node: Tree, what: str) -> int | PrimExpr:
        return self._check_int(self._value(node), node, what)

    def _check_int(self, value: Any, node: Tree, what: str) -> int | PrimExpr:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, PrimExpr) and _dt.is_integer(value.dtype):
            return value
        raise self.error(node, f"{what} must be an integer, not {_describe(value)}")

    # ------------------------------------------------------------ T.* handlers: blocks

    def _t_block(self, call: _Call, name: Tree) -> _Context:
        # An empty name is allowed, as in TVM: lowering makes nameless blocks that hold allocations.
        return _Context(call.name, self._str(name, "a block name"))

    def _t_init(self, call: _Call) -> _Context:
        return _Context(call.name)

    def _t_LetStmt(self, call: _Call, value: Tree) -> _Context:
        return _Context(call.name, value=self._prim(value))

    def _t_axis_spatial(self, call: _Call, dom: Tree, binding: Tree, dtype: Tree | None = None) -> _AxisDecl:
        return self._axis(call, IterKind.SPATIAL, dom, binding, dtype)

    def _t_axis_reduce(self, call: _Call, dom: Tree, binding: Tree, dtype: Tree | None = None) -> _AxisDecl:
        return self._axis(call, IterKind.REDUCE, dom, binding, dtype)

    def _t_axis_opaque(self, call: _Call, dom: Tree, binding: Tree, dtype: Tree | None = None) -> _AxisDecl:
        return self._axis(call, IterKind.OPAQUE, dom, binding, dtype)

    def _t_axis_scan(self, call: _Call, dom: Tree, binding: Tree, dtype: Tree | None = None) -> _AxisDecl:
        return self._axis(call, IterKind.SCAN, dom, binding, dtype)

    _t_axis_S, _t_axis_R, _t_axis_O = _t_axis_spatial, _t_axis_reduce, _t_axis_opaque

    def _axis(self, call: _Call, kind: IterKind, dom: Tree, binding: Tree, dtype: Tree | None) -> _AxisDecl:
        with self._binding_scope():  # the domain, like the binding, is read outside the block
            value = self._int_value(binding, "the value bound to a block iterator")
            var_dtype = self._dtype(dtype) if dtype is not None else _index_dtype(value)
            domain = self._domain(dom, var_dtype)
        return _AxisDecl(call.name, kind, domain, _as_index(value, var_dtype))

    def _domain(self, node: Tree, dtype: str) -> Range:
        value = self._value(node)
        if isinstance(value, (tuple, list)) and len(value) == 2:
            lo, hi = (_as_index(self._check_int(v, node, "a domain bound"), dtype) for v in value)
            return Range(lo, _extent(lo, hi))
        extent = self._check_int(
            value, node, "the domain of a block iterator (an extent or a (min, max) pair)"
        )
        return Range(IntImm(0, dtype), _as_index(extent, dtype))

    def _t_axis_remap(self, call: _Call, kinds: Tree, bindings: Tree) -> _AxisDecls:
        letters = self._str(kinds, "the iterator kinds")
        wrong = [letter for letter in letters if letter not in "SRO"]
        if wrong:
            raise self.error(
                kinds,
                f"unknown iterator kind {wrong[0]!r} in {letters!r}",
                hint="each letter is S (spatial), R (reduce) or O (opaque)",
            )
        with self._binding_scope():
            values = self._value(bindings)
        if not isinstance(values, (list, tuple)):
            raise self.error(bindings, "T.axis.remap takes a list of loop variables, such as [i, j]")
        if len(values) != len(letters):
            raise self.error(
                call.node,
                f"T.axis.remap has {_plural(len(letters), 'kind')} ({letters!r}) "
                f"but {_plural(len(values), 'loop variable')}",
                hint="give one letter per loop variable",
            )
        items = [n for n in bindings.children if n is not None] if bindings.data in ("list", "tuple") else []
        axes = []
        for index, (letter, value) in enumerate(zip(letters, values)):
            if not isinstance(value, Var) or value not in self.loop_ranges:
                raise self.error(
                    items[index] if len(items) == len(values) else bindings,
                    f"T.axis.remap binds iterators to loop variables, and {_describe(value)} is not one",
                    hint="use T.axis.spatial(dom, value) to bind an expression",
                )
            axes.append(_AxisDecl(call.name, IterKind(letter), self.loop_ranges[value], value))
        return _AxisDecls(call.name, tuple(axes))

    def _t_reads(self, call: _Call, *regions: Tree) -> _Directive:
        return _Directive(call.name, tuple(r for n in regions for r in self._regions(n)), call.node)

    def _t_writes(self, call: _Call, *regions: Tree) -> _Directive:
        return _Directive(call.name, tuple(r for n in regions for r in self._regions(n)), call.node)

    def _t_where(self, call: _Call, condition: Tree) -> _Directive:
        with self._binding_scope():
            predicate = self._prim(condition)
        if not _dt.is_bool(predicate.dtype):
            raise self.error(condition, f"T.where takes a boolean condition, not {_describe(predicate)}")
        return _Directive(call.name, predicate, call.node)

    def _t_block_attr(self, call: _Call, attrs: Tree) -> _Directive:
        return _Directive(call.name, self._constant_dict(attrs, call.name), call.node)

    def _t_func_attr(self, call: _Call, attrs: Tree) -> _Directive:
        return _Directive(call.name, self._constant_dict(attrs, call.name), call.node)

    def _t_evaluate(self, call: _Call, value: Tree) -> _Directive:
        return _Directive(call.name, self._prim(value), call.node)

    # ------------------------------------------------------------ T.* handlers: buffers and variables

    def _t_Buffer(
        self,
        call: _Call,
        shape: Tree,
        dtype: Tree | None = None,
        scope: Tree | None = None,
        **layout: Tree,
    ) -> _BufferSpec:
        buffer_type = self._buffer_type(shape, dtype, scope)
        return _BufferSpec(call.name, *buffer_type, self._layout(call, layout, len(buffer_type[0])))

    def _buffer_type(self, shape: Tree, dtype: Tree | None, scope: Tree | None) -> tuple[tuple, str, str]:
        return (
            self._shape(shape),
            self._dtype(dtype) if dtype is not None else "float32",
            self._scope(scope) if scope is not None else "global",
        )

    def _layout(self, call: _Call, keywords: dict[str, Tree], ndim: int) -> tuple[tuple[str, Any], ...]:
        """TVM's buffer layout keywords: strides, elem_offset, offset_factor, align, axis_separators."""
        layout = []
        for key, node in keywords.items():
            if key not in _LAYOUT_KEYWORDS:
                raise self.error(
                    node,
                    f"{call.name} has no argument {key!r}",
                    hint=f"the layout arguments are {', '.join(_LAYOUT_KEYWORDS)}",
                )
            if key == "strides":
                value: Any = self._shape(node)
            elif key == "elem_offset":
                value = self._int_value(node, "elem_offset")
            elif key == "axis_separators":
                value = self._value(node)
                if not isinstance(value, (list, tuple)) or not all(
                    isinstance(v, int) and not isinstance(v, bool) for v in value
                ):
                    raise self.error(node, f"axis_separators is a list of integers, not {_describe(value)}")
                value = tuple(value)
                try:
                    check_axis_separators(value, ndim, "declared here")
                except ValueError as err:
                    raise self.error(node, str(err)) from None
            else:
                value = self._value(node)
                if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                    raise self.error(node, f"{key} is a non-negative integer, not {_describe(value)}")
            layout.append((key, value))
        return tuple(layout)

    def _t_alloc_buffer(
        self,
        call: _Call,
        shape: Tree,
        dtype: Tree | None = None,
        scope: Tree | None = None,
        **layout: Tree,
    ) -> _BufferDecl:
        kind = "alloc" if call.name == "T.alloc_buffer" else "decl"
        buffer_type = self._buffer_type(shape, dtype, scope)
        return _BufferDecl(
            call.name, kind, *buffer_type, layout=self._layout(call, layout, len(buffer_type[0]))
        )

    _t_decl_buffer = _t_alloc_buffer

    def _t_match_buffer(
        self,
        call: _Call,
        param: Tree,
        shape: Tree,
        dtype: Tree | None = None,
        scope: Tree | None = None,
        **layout: Tree,
    ) -> _BufferDecl | _RegionMatch:
        if param.data == "subscript" and isinstance(self._value(param.children[0]), Buffer):
            return self._region_match(call, param, shape, dtype, scope, layout)
        handle = self._value(param)
        if not (isinstance(handle, Var) and handle.dtype == "handle" and handle in self.params):
            raise self.error(
                param,
                f"T.match_buffer matches a T.handle parameter of the function, not {_describe(handle)}",
                hint="declare the parameter as a: T.handle (each handle is matched once)",
            )
        buffer_type = self._buffer_type(shape, dtype, scope)
        return _BufferDecl(
            call.name,
            "match",
            *buffer_type,
            param=handle,
            layout=self._layout(call, layout, len(buffer_type[0])),
        )

    def _region_match(
        self, call: _Call, region_node: Tree, shape: Tree, dtype: Tree | None, scope: Tree | None, layout
    ) -> _RegionMatch:
        """``T.match_buffer(B[vi : vi + 1, vj], (1, 1))``: a view of a region of B inside a block."""
        (region,) = self._regions(region_node)
        source = region.buffer
        for key, node in layout.items():
            if key not in _REGION_MATCH_KEYWORDS:
                raise self.error(
                    node,
                    f"{call.name} of a region of {source.name} takes no {key}=: the view has the "
                    "layout of the region it matches",
                    hint=f"leave it out (accepted: {', '.join(_REGION_MATCH_KEYWORDS)})",
                )
        view_shape, view_dtype, view_scope = self._buffer_type(shape, dtype, scope)
        if view_dtype != source.dtype or view_scope not in ("global", source.scope):
            raise self.error(
                call.node,
                f"{call.name} of a region of {source.name} ({source.dtype}, {source.scope}) declares "
                f"{view_dtype}, {view_scope}",
                hint=f'give the source\'s dtype and scope: dtype="{source.dtype}"',
            )
        leading = len(region.region) - len(view_shape)
        unit = all(
            isinstance(r.extent, IntImm) and r.extent.value == 1 for r in region.region[: max(leading, 0)]
        )
        analyzer = Analyzer()
        same = leading >= 0 and all(
            analyzer.can_prove_equal(r.extent, e) for r, e in zip(region.region[leading:], view_shape)
        )
        if not (unit and same):
            extents = ", ".join(str(r.extent) for r in region.region)
            raise self.error(
                region_node,
                f"the region of {source.name} has extents ({extents}), which shape "
                f"({', '.join(map(str, view_shape))}) does not match",
                hint="give the region's extents as the shape (leading extents of 1 may be left out)",
            )
        return _RegionMatch(call.name, region, tuple(view_shape), view_dtype, source.scope)

    def _access_ptr(
        self,
        call: _Call,
        access_mask: Tree,
        ptr_type: Tree | None = None,
        content_lanes: Tree | None = None,
        offset: Tree | None = None,
        extent: Tree | None = None,
    ) -> tuple[str, PrimExpr, PrimExpr | None]:
        """``A.access_ptr("r", offset=k, extent=n)``: TVM's access mask ("r", "w", "rw" or 1, 2, 3),
        offset and extent (None: to the end)."""
        mask = self._value(access_mask)
        access = {1: "r", 2: "w", 3: "rw"}.get(mask, mask) if isinstance(mask, int) else mask
        if access not in ("r", "w", "rw"):
            raise self.error(access_mask, f'the access mask is "r", "w" or "rw" (or 1, 2, 3), not {mask!r}')
        for name, node in (("ptr_type", ptr_type), ("content_lanes", content_lanes)):
            if node is not None:
                raise self.error(node, f"{call.name}(..., {name}=) is not supported", hint="leave it out")
        start = self._int_value(offset, "the offset") if offset is not None else 0
        size = None if extent is None else self._int_value(extent, "the extent")
        return (
            access,
            _as_index(start, _index_dtype(start)),
            None if size is None else _as_index(size, _index_dtype(size)),
        )

    def _t_var(self, call: _Call, dtype: Tree) -> _VarDecl:
        return _VarDecl(call.name, self._dtype(dtype))

    # ------------------------------------------------------------ T.* handlers: loops

    def _range(
        self, call: _Call, start: Tree, stop: Tree | None = None, step: Tree | None = None
    ) -> _LoopSpec:
        if step is not None and self._value(step) != 1:
            raise self.error(
                step, "range() with a step is not supported", hint="loop over range(n) and scale i"
            )
        return self._loop(call, ForKind.SERIAL, start, stop)

    def _t_serial(
        self, call: _Call, start: Tree, stop: Tree | None = None, *, annotations: Tree | None = None
    ):
        return self._loop(call, _LOOP_KINDS[call.name], start, stop, annotations)

    _t_parallel = _t_vectorized = _t_unroll = _t_serial

    def _t_thread_binding(
        self,
        call: _Call,
        start: Tree,
        stop: Tree | None = None,
        thread: Tree | None = None,
        *,
        annotations: Tree | None = None,
    ) -> _LoopSpec:
        if thread is None and stop is not None and isinstance(self._value(stop), str):
            thread, stop = stop, None
        if thread is None:
            raise self.error(call.node, "T.thread_binding needs a thread", hint='add thread="threadIdx.x"')
        return self._loop(call, ForKind.THREAD_BINDING, start, stop, annotations, self._thread_tag(thread))

    def _thread_tag(self, node: Tree) -> str:
        tag = self._str(node, "a thread tag")
        if tag not in THREAD_TAGS:
            raise self.error(node, f"unknown thread tag {tag!r}", hint=f"use one of {', '.join(THREAD_TAGS)}")
        return tag

    def _t_env_thread(self, call: _Call, thread: Tree) -> _ThreadEnv:
        return _ThreadEnv(call.name, self._thread_tag(thread))

    def _t_launch_thread(self, call: _Call, thread: Tree, extent: Tree) -> _ThreadLaunch:
        value = self._value(thread)
        size = self._int_value(extent, "the number of threads")
        if isinstance(value, Var):
            tag = self.thread_tags.get(value)
            if tag is None:
                raise self.error(
                    thread,
                    f"T.launch_thread takes a thread tag or a T.env_thread variable, not {_describe(value)}",
                )
            return _ThreadLaunch(call.name, tag, _as_index(size, value.dtype), value)
        return _ThreadLaunch(call.name, self._thread_tag(thread), _as_index(size, _index_dtype(size)))

    def _t_grid(self, call: _Call, *extents: Tree) -> _GridSpec:
        if not extents:
            raise self.error(call.node, "T.grid needs at least one extent")
        return _GridSpec(call.name, tuple(self._loop(call, ForKind.SERIAL, extent) for extent in extents))

    def _loop(
        self,
        call: _Call,
        kind: ForKind,
        start: Tree,
        stop: Tree | None = None,
        annotations: Tree | None = None,
        thread: str | None = None,
    ) -> _LoopSpec:
        first = self._int_value(start, "a loop bound")
        lo, hi = (0, first) if stop is None else (first, self._int_value(stop, "a loop bound"))
        dtype = _index_dtype(lo, hi)
        lo, hi = _as_index(lo, dtype), _as_index(hi, dtype)
        extent = hi if stop is None else _extent(lo, hi)
        loop_annotations = self._constant_dict(annotations, "annotations=") if annotations is not None else {}
        return _LoopSpec(call.name, kind, lo, extent, thread, loop_annotations)


def _handlers() -> dict[str, Callable]:
    """T.* name -> handler; every script function of namespace.py has one (checked at import)."""
    table = {name: getattr(ScriptCalls, "_t_" + name.replace(".", "_")) for name in namespace.T_FUNCTIONS}
    table.update(dict.fromkeys(namespace.T_DTYPES, ScriptCalls._t_dtype))
    for name in namespace.T_INTRINSICS:
        table.setdefault(name, ScriptCalls._t_intrinsic)
    for name in namespace.T_OPAQUE_CALLS:
        table[name] = ScriptCalls._t_opaque
    table["Buffer"] = ScriptCalls._t_Buffer
    return table


_HANDLERS = _handlers()
_T_PATHS = frozenset(_HANDLERS) | {"handle", "axis", "prim_func"}


@functools.cache
def _signature(handler: Callable) -> inspect.Signature:
    """The script-visible signature of a handler (without self and the call)."""
    signature = inspect.signature(handler)
    return signature.replace(parameters=list(signature.parameters.values())[2:])
