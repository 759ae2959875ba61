"""Expressions of TVMScript: evaluating an expression tree to a script value.

``ExpressionEvaluator`` is a mixin of ``_FunctionBuilder`` (script_builder.py); ``_expr``
dispatches on the tree's rule through ``_EXPRESSIONS``. Literals, tuples, lists and dicts
become Python values; operators fold Python constants in Python and build IR through tir.op
as soon as one operand is a PrimExpr; attributes walk the T namespace; calls are checked
against the handler's signature and run the ``T.*`` handler of script_calls.py. Names are
resolved by script_scope.py.
"""

from __future__ import annotations

import ast
import difflib
import functools
import operator
import re
from collections.abc import Callable
from typing import Any

from lark import Token, Tree

from .. import op
from ..buffer import Buffer
from ..expr import BufferLoad, BufferPointer, PrimExpr, const
from . import namespace
from .errors import ParseError, span_of
from .script_calls import _HANDLERS, _T_PATHS, ScriptCalls, _signature
from .script_scope import NameScopes
from .script_values import (
    _I_REF,
    _NODE_ERRORS,
    _RANGE,
    _BufferMethod,
    _Call,
    _describe,
    _is_number,
    _Marker,
    _RegionView,
    _TRef,
)

_PYTHON_ARITH = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "%": operator.mod,
    "&": operator.and_,
    "|": operator.or_,
}
_IR_ARITH = {
    "+": op.add,
    "-": op.sub,
    "*": op.mul,
    "/": op.div,
    "//": op.floordiv,
    "%": op.floormod,
    "&": op.logical_and,
    "|": op.logical_or,
}
_PYTHON_COMPARE = {
    "<": operator.lt,
    ">": operator.gt,
    "<=": operator.le,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}
_IR_COMPARE = {"<": op.lt, ">": op.gt, "<=": op.le, ">=": op.ge, "==": op.eq, "!=": op.ne}


class ExpressionEvaluator:
    """Evaluates expression trees: literals, operators, attributes, subscripts and calls."""

    def _expr(self, node: Tree) -> Any:
        """Evaluate an expression tree to a script value (markers included)."""
        try:
            return _EXPRESSIONS[node.data](self, node)
        except _NODE_ERRORS as exc:
            raise self.error(node, str(exc)) from None

    def _value(self, node: Tree) -> Any:
        """Evaluate an expression that must be a value, not a marker."""
        value = self._expr(node)
        if isinstance(value, _Marker):
            raise self._misuse(value, node)
        return value

    def _prim(self, node: Tree) -> PrimExpr:
        return self._as_prim(self._value(node), node)

    def _as_prim(self, value: Any, node: Tree) -> PrimExpr:
        if isinstance(value, PrimExpr):
            return value
        if _is_number(value):
            return const(value)
        raise self.error(node, f"expected an expression here, not {_describe(value)}")

    def _operand(self, value: Any, node: Tree) -> Any:
        if isinstance(value, (PrimExpr, int, float, str, tuple, list)):
            return value
        raise self.error(node, f"{_describe(value)} cannot be used in an expression")

    def _misuse(self, value: _Marker, node: Tree) -> ParseError:
        return self.error(node, f"{value.name}(...) cannot be used here", hint=value.usage)

    def _e_int(self, node: Tree) -> int:
        return int(node.children[0], 0)

    def _e_float(self, node: Tree) -> float:
        return float(node.children[0])

    def _e_string(self, node: Tree) -> str:
        parts = []
        for token in node.children:
            prefix = re.match(r"[A-Za-z]*", token).group().lower()
            if "f" in prefix or "b" in prefix:
                raise self.error(token, "f-strings and bytes are not supported in TVMScript")
            parts.append(ast.literal_eval(str(token)))
        return "".join(parts)

    def _e_constant(self, node: Tree) -> bool | None:
        return {"none": None, "true": True, "false": False}[node.data]

    def _e_tuple(self, node: Tree) -> tuple:
        return tuple(self._value(item) for item in node.children if item is not None)

    def _e_list(self, node: Tree) -> list:
        return [self._value(item) for item in node.children if item is not None]

    def _e_dict(self, node: Tree) -> dict:
        items = (item.children for item in node.children if item is not None)
        return {self._value(key): self._value(value) for key, value in items}

    def _e_unsupported(self, node: Tree) -> Any:
        what = {"lambdef": "lambda", "ellipsis": "...", "slice": "a slice outside T.reads/T.writes"}[
            node.data
        ]
        raise self.error(node, f"{what} is not supported in TVMScript")

    def _e_attribute(self, node: Tree) -> Any:
        base_node, attr_token = node.children
        base = self._value(base_node)
        attr = str(attr_token)
        if isinstance(base, _TRef):
            path = (*base.path, attr)
            key = ".".join(path)
            if key not in _T_PATHS:
                close = difflib.get_close_matches(key, sorted(_T_PATHS), n=1)
                hint = f"did you mean T.{close[0]}?" if close else "see dir(T) for the available names"
                raise self.error(node, f"unknown TVMScript name T.{key}", hint=hint)
            return _TRef(path)
        if base is _I_REF:
            raise self.error(node, f"I.{attr} is only valid as the decorator of a class (@I.ir_module)")
        if isinstance(base, Buffer) and attr in ("shape", "dtype", "name", "ndim", "strides", "scope"):
            return getattr(base, attr)
        if isinstance(base, Buffer) and attr == "elem_offset":
            return base.elem_offset if base.elem_offset is not None else const(0)
        if isinstance(base, Buffer) and attr == "data":
            return BufferPointer(base, const(0))
        if isinstance(base, Buffer) and attr == "access_ptr":
            return _BufferMethod(base, attr)
        raise self.error(attr_token, f"{_describe(base)} has no attribute {attr!r} in TVMScript")

    def _e_subscript(self, node: Tree) -> Any:
        base_node, *index_nodes = node.children
        base = self._value(base_node)
        if isinstance(base, Buffer):
            return BufferLoad(base, self._indices(node, base, index_nodes))
        if isinstance(base, _RegionView):
            return BufferLoad(
                base.region.buffer, base.source_indices(self._indices(node, base.view, index_nodes))
            )
        if isinstance(base, _TRef) and base.path == ("Buffer",):
            return self._invoke(ScriptCalls._t_Buffer, "T.Buffer", node, index_nodes, {})
        if isinstance(base, (tuple, list, str, dict)) and len(index_nodes) == 1:
            index = index_nodes[0]
            if index.data == "slice":
                bounds = [None if n is None else self._value(n) for n in index.children]
                return base[slice(*bounds)]
            return base[self._value(index)]
        raise self.error(base_node, f"{_describe(base)} cannot be indexed")

    def _e_call(self, node: Tree) -> Any:
        callee_node, arguments = node.children
        callee = self._value(callee_node)
        args, kwargs = self._arguments(arguments)
        if isinstance(callee, _TRef):
            handler = _HANDLERS.get(callee.name[2:])
            if handler is None:
                raise self.error(callee_node, f"{callee.name} cannot be called in a script")
            return self._invoke(handler, callee.name, node, args, kwargs)
        if callee is _RANGE:
            return self._invoke(ScriptCalls._range, "range", node, args, kwargs)
        if isinstance(callee, _BufferMethod):
            access, offset, extent = self._invoke(
                ScriptCalls._access_ptr, f"{callee.buffer.name}.access_ptr", node, args, kwargs
            )
            return BufferPointer(callee.buffer, offset, access, extent)
        raise self.error(
            callee_node,
            f"{_describe(callee)} cannot be called",
            hint="a script calls T.* functions and range() only",
        )

    def _arguments(self, arguments: Tree | None) -> tuple[list[Tree], dict[str, Tree]]:
        args: list[Tree] = []
        kwargs: dict[str, Tree] = {}
        for item in arguments.children if arguments is not None else ():
            if item.data == "star_arg":
                raise self.error(item, "*args and **kwargs are not supported in TVMScript calls")
            if item.data != "keyword":
                if kwargs:
                    raise self.error(item, "a positional argument follows a keyword argument")
                args.append(item)
                continue
            key, value = item.children
            if key.data != "name":
                raise self.error(key, "a keyword argument needs a name before '='")
            name = str(key.children[0])
            if name in kwargs:
                raise self.error(key, f"keyword argument {name} is given twice")
            kwargs[name] = value
        return args, kwargs

    def _invoke(self, handler: Callable, name: str, node: Tree, args: list, kwargs: dict) -> Any:
        signature = _signature(handler)
        try:
            signature.bind(*args, **kwargs)
        except TypeError as exc:
            usage = namespace.T_FUNCTIONS.get(name[2:]) or f"{name}{signature}"
            raise self.error(node, f"wrong arguments to {name}: {exc}", hint=f"usage: {usage}") from None
        return handler(self, _Call(name, node), *args, **kwargs)

    def _e_chain(self, node: Tree) -> Any:
        """``a + b - c``, ``a * b``, ``a & b``, ``a | b``: left to right."""
        children = node.children
        result = self._operand(self._value(children[0]), children[0])
        for index in range(1, len(children), 2):
            right_node = children[index + 1]
            right = self._operand(self._value(right_node), right_node)
            try:
                result = self._arith(str(children[index]), result, right)
            except _NODE_ERRORS as exc:
                start, end = span_of(children[0]), span_of(right_node)
                if start is None or end is None:
                    raise self.error(node, str(exc)) from None
                raise self.source.error(str(exc), *start[:2], *end[2:]) from None
        return result

    @staticmethod
    def _arith(symbol: str, a: Any, b: Any) -> Any:
        if symbol == "@":
            raise TypeError("the matrix product operator @ is not supported in TVMScript")
        if isinstance(a, PrimExpr) or isinstance(b, PrimExpr):
            for value in (a, b):
                if not isinstance(value, (PrimExpr, int, float)):
                    raise TypeError(f"cannot combine {_describe(value)} with an expression")
            return _IR_ARITH[symbol](a, b)
        return _PYTHON_ARITH[symbol](a, b)

    @staticmethod
    def _power(a: Any, b: Any) -> Any:
        if isinstance(a, PrimExpr) or isinstance(b, PrimExpr):
            return op.call("pow", a, b)
        return a**b

    def _e_power(self, node: Tree) -> Any:
        base, exponent = node.children
        return self._power(
            self._operand(self._value(base), base), self._operand(self._value(exponent), exponent)
        )

    def _e_unary(self, node: Tree) -> Any:
        symbol, operand_node = node.children
        value = self._operand(self._value(operand_node), operand_node)
        if isinstance(value, PrimExpr):
            return {"-": op.neg, "+": lambda x: x, "~": op.logical_not}[str(symbol)](value)
        return {"-": operator.neg, "+": operator.pos, "~": operator.invert}[str(symbol)](value)

    def _e_comparison(self, node: Tree) -> Any:
        items = node.children
        left = self._value(items[0])
        result = None
        index = 1
        while index < len(items):
            symbol = str(items[index])
            index += 1
            if isinstance(items[index], Token):
                symbol += " " + str(items[index])
                index += 1
            right = self._value(items[index])
            index += 1
            if symbol not in _PYTHON_COMPARE:
                raise TypeError(f"the {symbol!r} operator is not supported in TVMScript")
            if isinstance(left, PrimExpr) or isinstance(right, PrimExpr):
                part = _IR_COMPARE[symbol](
                    self._operand(left, items[0]), self._operand(right, items[index - 1])
                )
            else:
                part = _PYTHON_COMPARE[symbol](left, right)
            result = part if result is None else self._logical("and", [result, part])
            left = right
        return result

    @staticmethod
    def _logical(kind: str, values: list[Any]) -> Any:
        if not any(isinstance(v, PrimExpr) for v in values):
            return functools.reduce(lambda a, b: (a and b) if kind == "and" else (a or b), values)
        combine = op.logical_and if kind == "and" else op.logical_or
        return functools.reduce(combine, values)

    def _e_and_test(self, node: Tree) -> Any:
        return self._logical("and", [self._value(n) for n in node.children])

    def _e_or_test(self, node: Tree) -> Any:
        return self._logical("or", [self._value(n) for n in node.children])

    def _e_not_op(self, node: Tree) -> Any:
        value = self._value(node.children[0])
        return op.logical_not(value) if isinstance(value, PrimExpr) else not value

    def _e_ternary(self, node: Tree) -> Any:
        true_node, cond_node, false_node = node.children
        cond = self._value(cond_node)
        if not isinstance(cond, PrimExpr):
            return self._value(true_node if cond else false_node)
        return op.select(cond, self._value(true_node), self._value(false_node))


_EXPRESSIONS: dict[str, Callable] = {
    "name": NameScopes._e_name,
    "int": ExpressionEvaluator._e_int,
    "float": ExpressionEvaluator._e_float,
    "string": ExpressionEvaluator._e_string,
    "none": ExpressionEvaluator._e_constant,
    "true": ExpressionEvaluator._e_constant,
    "false": ExpressionEvaluator._e_constant,
    "tuple": ExpressionEvaluator._e_tuple,
    "testlist_tuple": ExpressionEvaluator._e_tuple,
    "expr_tuple": ExpressionEvaluator._e_tuple,
    "list": ExpressionEvaluator._e_list,
    "dict": ExpressionEvaluator._e_dict,
    "attribute": ExpressionEvaluator._e_attribute,
    "subscript": ExpressionEvaluator._e_subscript,
    "call": ExpressionEvaluator._e_call,
    "arith_expr": ExpressionEvaluator._e_chain,
    "term": ExpressionEvaluator._e_chain,
    "and_expr": ExpressionEvaluator._e_chain,
    "or_expr": ExpressionEvaluator._e_chain,
    "power": ExpressionEvaluator._e_power,
    "unary": ExpressionEvaluator._e_unary,
    "comparison": ExpressionEvaluator._e_comparison,
    "and_test": ExpressionEvaluator._e_and_test,
    "or_test": ExpressionEvaluator._e_or_test,
    "not_op": ExpressionEvaluator._e_not_op,
    "ternary": ExpressionEvaluator._e_ternary,
    "lambdef": ExpressionEvaluator._e_unsupported,
    "ellipsis": ExpressionEvaluator._e_unsupported,
    "slice": ExpressionEvaluator._e_unsupported,
}
