"""The ``T.*`` calls of TVMScript that evaluate to expressions.

``ExpressionCalls`` is a mixin of ``_FunctionBuilder`` (script_builder.py), reached through
``ScriptCalls`` (script_calls.py), whose handler table names every ``_t_*`` method here:
typed constants and variables (``T.float32(0)``, ``T.int32()``), casts, intrinsics, min/max,
floor and truncating division, selects, logical operators, dtype limits, vector ramps and
broadcasts, ``T.Let`` and the older ``T.let(x, value, body)``. Each handler takes the call
and its argument trees and evaluates them through the expression mixin (script_exprs.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lark import Tree

from .. import dtype as _dt
from .. import op
from ..expr import Broadcast, FloatImm, FloorDiv, FloorMod, Let, PrimExpr, Ramp, StringImm, Var, const
from ..matrix_ops import MATRIX_OPS, make_matrix_call, tile
from .script_values import _Call, _Context, _describe, _is_number, _same_dtype, _VarDecl


class ExpressionCalls:
    """Handlers of the T.* calls that give a PrimExpr (or a Python constant)."""

    def _t_dtype(self, call: _Call, value: Tree | None = None) -> PrimExpr | _VarDecl:
        dtype = call.name[2:]
        if value is None:
            return _VarDecl(call.name, dtype)
        number = self._value(value)
        if isinstance(number, str) and _dt.is_float(dtype) and number in ("inf", "-inf", "nan"):
            return FloatImm(float(number), dtype)
        if isinstance(number, float) and not _dt.is_float(dtype):
            if not number.is_integer():
                raise self.error(value, f"{call.name}({number}) would drop the fraction", hint="use T.Cast")
            number = int(number)
        if isinstance(number, float):
            return FloatImm(number, dtype)
        return op.cast(dtype, self._as_prim(number, value))

    def _t_intrinsic(self, call: _Call, *args: Tree, dtype: Tree | None = None) -> PrimExpr:
        values = [self._value(arg) for arg in args]
        result_dtype = self._dtype(dtype) if dtype is not None else None
        return op.call(
            call.name[2:], *(StringImm(v) if isinstance(v, str) else v for v in values), dtype=result_dtype
        )

    def _t_opaque(self, call: _Call, *args: Tree, dtype: Tree | None = None) -> PrimExpr:
        values = [self._value(arg) for arg in args]
        return op.opaque_call(call.name[2:], values, self._dtype(dtype) if dtype is not None else "handle")

    def _t_call_extern(self, call: _Call, *args: Tree, dtype: Tree | None = None) -> PrimExpr:
        """``T.call_extern(dtype, name, *args)``, or TVM's ``T.call_extern(name, *args, dtype=...)``;
        the empty dtype (TVM's void: a call made for its effect) is carried as int32."""
        if dtype is None:
            if len(args) < 2:
                raise self.error(
                    call.node,
                    'T.call_extern needs a dtype and a function name: T.call_extern("int32", "f", x)',
                )
            dtype, *args = args
        if not args:
            raise self.error(call.node, "T.call_extern needs the function's name")
        name, *rest = args
        values = [self._value(arg) for arg in rest]
        result_dtype = "int32" if self._value(dtype) == "" else self._dtype(dtype)
        return op.opaque_call("call_extern", [self._str(name, "the function's name"), *values], result_dtype)

    def _t_call_packed(self, call: _Call, name: Tree, *args: Tree) -> PrimExpr:
        values = [self._value(arg) for arg in args]
        return op.opaque_call("call_packed", [self._str(name, "the function's name"), *values], "int32")

    def _t_reinterpret(self, call: _Call, dtype: Tree, value: Tree) -> PrimExpr:
        return op.reinterpret(self._dtype(dtype), self._prim(value))

    def _t_matrix_op(self, call: _Call, *args: Tree) -> PrimExpr:
        """A matrix operation (tir/matrix_ops.py): tile arguments are regions, A[0:8, 0:8]."""
        name = call.name[2:]
        matrix_op = MATRIX_OPS[name]
        if len(args) != matrix_op.arity:
            raise self.error(call.node, f"{call.name} takes {matrix_op.arity} arguments, got {len(args)}")
        values = []
        for position, arg in enumerate(args):
            if position not in matrix_op.tile_positions:
                values.append(self._prim(arg))
                continue
            regions = self._regions(arg)
            if len(regions) != 1:
                raise self.error(arg, f"argument {position} of {call.name} is one buffer region, A[0:8, 0:8]")
            values.append(tile(regions[0]))
        return make_matrix_call(name, tuple(values))

    _t_simdgroup_load = _t_simdgroup_store = _t_simdgroup_fill = _t_matrix_op
    _t_simdgroup_multiply_accumulate = _t_matrix_op
    _t_wmma_load_matrix_sync = _t_wmma_store_matrix_sync = _t_matrix_op
    _t_wmma_fill_fragment = _t_wmma_mma_sync = _t_matrix_op
    _t_mma_ldmatrix_a = _t_mma_ldmatrix_b = _t_mma_fill = _t_mma_store = _t_mma_sync_m16n8k16 = _t_matrix_op

    def _t_Cast(self, call: _Call, dtype: Tree, value: Tree) -> PrimExpr:
        return op.cast(self._dtype(dtype), self._prim(value))

    def _t_cast(self, call: _Call, value: Tree, dtype: Tree) -> PrimExpr:
        return op.cast(self._dtype(dtype), self._prim(value))

    def _binary(self, python_fn: Callable, ir_fn: Callable, a: Tree, b: Tree) -> Any:
        x, y = self._value(a), self._value(b)
        if _is_number(x) and _is_number(y):
            return python_fn(x, y)
        return ir_fn(self._operand(x, a), self._operand(y, b))

    def _t_max(self, call: _Call, a: Tree, b: Tree) -> Any:
        return self._binary(max, op.max_value, a, b)

    def _t_min(self, call: _Call, a: Tree, b: Tree) -> Any:
        return self._binary(min, op.min_value, a, b)

    def _t_abs(self, call: _Call, x: Tree) -> Any:
        value = self._value(x)
        if _is_number(value):
            return abs(value)
        value = self._as_prim(value, x)
        if _dt.is_float(value.dtype):
            return op.call("fabs", value)
        return op.select(op.lt(value, 0), op.neg(value), value)

    def _t_floordiv(self, call: _Call, a: Tree, b: Tree) -> Any:
        return self._floor_op(FloorDiv, op.floordiv, a, b)

    def _t_ceildiv(self, call: _Call, a: Tree, b: Tree) -> PrimExpr:
        x, y = self._prim(a), self._prim(b)
        if not (_dt.is_integer(x.dtype) and _dt.is_integer(y.dtype)):
            raise self.error(call.node, "T.ceildiv divides integers", hint="use T.ceil(a / b) for floats")
        return op.floordiv(op.sub(op.add(x, y), 1), y)

    def _t_floormod(self, call: _Call, a: Tree, b: Tree) -> Any:
        return self._floor_op(FloorMod, op.floormod, a, b)

    def _floor_op(self, node_class: type, int_fn: Callable, a: Tree, b: Tree) -> Any:
        x, y = self._value(a), self._value(b)
        if (
            isinstance(x, float)
            or isinstance(y, float)
            or any(isinstance(v, PrimExpr) and _dt.is_float(v.dtype) for v in (x, y))
        ):
            # Float floor division stays one node (the printer writes it as T.floordiv).
            return node_class(*_same_dtype(x, y))
        return int_fn(self._operand(x, a), self._operand(y, b))

    def _t_truncdiv(self, call: _Call, a: Tree, b: Tree) -> PrimExpr:
        return op.div(self._prim(a), self._operand(self._value(b), b))

    def _t_truncmod(self, call: _Call, a: Tree, b: Tree) -> PrimExpr:
        return op.truncmod(self._prim(a), self._operand(self._value(b), b))

    def _t_Select(self, call: _Call, condition: Tree, true_value: Tree, false_value: Tree) -> PrimExpr:
        return op.select(self._value(condition), self._value(true_value), self._value(false_value))

    def _t_And(self, call: _Call, a: Tree, b: Tree) -> PrimExpr:
        return op.logical_and(self._value(a), self._value(b))

    def _t_Or(self, call: _Call, a: Tree, b: Tree) -> PrimExpr:
        return op.logical_or(self._value(a), self._value(b))

    def _t_Not(self, call: _Call, a: Tree) -> PrimExpr:
        return op.logical_not(self._value(a))

    def _t_max_value(self, call: _Call, dtype: Tree) -> PrimExpr:
        return op.limit_value(self._dtype(dtype), largest=True)

    def _t_min_value(self, call: _Call, dtype: Tree) -> PrimExpr:
        return op.limit_value(self._dtype(dtype), largest=False)

    def _t_Ramp(self, call: _Call, base: Tree, stride: Tree, lanes: Tree) -> PrimExpr:
        start = self._prim(base)
        step = self._value(stride)
        step = const(step, start.dtype) if _is_number(step) else self._as_prim(step, stride)
        if step.dtype != start.dtype:
            raise self.error(stride, f"the stride is {step.dtype} but the base is {start.dtype}")
        return Ramp(start, step, self._lanes(lanes))

    def _t_Broadcast(self, call: _Call, value: Tree, lanes: Tree) -> PrimExpr:
        return Broadcast(self._prim(value), self._lanes(lanes))

    _t_ramp, _t_broadcast = _t_Ramp, _t_Broadcast

    def _lanes(self, node: Tree) -> int:
        lanes = self._value(node)
        if not isinstance(lanes, int) or isinstance(lanes, bool) or lanes < 2:
            raise self.error(node, f"the number of lanes is an integer of at least 2, not {_describe(lanes)}")
        return lanes

    def _t_Let(self, call: _Call, body: Tree, where: Tree) -> PrimExpr:
        if where.data != "dict" or not [item for item in where.children if item is not None]:
            raise self.error(where, "T.Let binds its variables with where={x: value}")
        bindings = []
        for item in (item for item in where.children if item is not None):
            key, value_node = item.children
            if key.data != "name":
                raise self.error(key, "the keys of where={...} are the names of the new variables")
            value = self._prim(value_node)
            bindings.append((Var(str(key.children[0]), value.dtype), value))
        self.scopes.append({var.name: var for var, _ in bindings})
        result = self._prim(body)
        self.scopes.pop()
        for var, value in reversed(bindings):
            result = Let(var, value, result)
        return result

    def _t_let(self, call: _Call, var: Tree, value: Tree, body: Tree | None = None) -> PrimExpr | _Context:
        """TVMScript's older spelling of a let: ``T.let(x, value, body)`` is ``T.Let(body, where={x: value})``
        and ``with T.let(x, value):`` is ``with T.LetStmt(value) as x:``, for an ``x = T.int32()``."""
        bound = self._value(var)
        if not isinstance(bound, Var):
            declared = "a variable declared before (x = T.int32())"
            raise self.error(var, f"T.let binds {declared}, not {_describe(bound)}")
        bound_value = self._prim(value)
        if bound_value.dtype != bound.dtype:
            raise self.error(value, f"{bound.name} is {bound.dtype} but the value is {bound_value.dtype}")
        if body is None:
            return _Context(call.name, value=bound_value, var=bound)
        return Let(bound, bound_value, self._prim(body))
