"""The TVMScript builder: one ``funcdef`` tree to one PrimFunc.

``_FunctionBuilder`` walks the tree lark gives (parser.py) statement by statement: parameters
first (scalars before buffers, whose shapes may use them), then the body with a stack of name
scopes and of frames (blocks, and the loops, ifs and inits between them). It builds nodes
through tir.op, wraps TensorIR bodies in the "root" block, and turns every problem into a
ParseError at the user's line. Its mixins hold the rest: name scopes (script_scope.py),
expressions (script_exprs.py), buffer accesses (script_buffer_access.py) and the ``T.*`` call
handlers (script_calls.py, script_expr_calls.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from lark import Token, Tree

from .. import dtype as _dt
from ..buffer import Buffer
from ..expr import BufferLoad, PrimExpr, Range, Var
from ..function import PrimFunc
from ..stmt import Allocate, BlockRealize, Evaluate, For, IfThenElse, LetStmt, Stmt, seq
from . import namespace
from .errors import ParseError, SourceMap, span_of
from .script_blocks import BlockFrames
from .script_buffer_access import BufferAccess
from .script_calls import ScriptCalls
from .script_exprs import _IR_ARITH, ExpressionEvaluator
from .script_scope import NameScopes
from .script_values import (
    _NODE_ERRORS,
    _BlockFrame,
    _BufferDecl,
    _BufferSpec,
    _Context,
    _describe,
    _Directive,
    _GridSpec,
    _LoopSpec,
    _Marker,
    _noop,
    _plural,
    _Scoped,
    _ThreadLaunch,
    _TRef,
    _VarDecl,
)

_TUPLE_TREES = frozenset({"tuple", "list", "testlist_tuple", "expr_tuple"})
_REJECTED = {
    "while_stmt": ("while loops are not supported in TVMScript", "loop with for ... in range(n)"),
    "try_stmt": ("try/except is not supported in TVMScript", None),
    "return_stmt": (
        "return is not supported in a prim_func",
        "a prim_func returns nothing: write its results into an output buffer",
    ),
    "yield_stmt": ("yield is not supported in a prim_func", None),
    "import_stmt": ("import is not allowed inside a prim_func", "import at module level"),
    "global_stmt": ("global/nonlocal is not supported in a prim_func", None),
    "del_stmt": ("del is not supported in a prim_func", None),
    "break_stmt": ("break is not supported in TVMScript loops", "guard the loop body with an if"),
    "continue_stmt": ("continue is not supported in TVMScript loops", "guard the loop body with an if"),
    "raise_stmt": ("raise is not supported in a prim_func", None),
    "assert_stmt": ("assert is not supported in a prim_func", "use T.where(cond) or an if statement"),
    "funcdef": (
        "a function cannot be defined inside a prim_func",
        "define it at module level; put several functions in an @I.ir_module class",
    ),
    "decorated": (
        "a function cannot be defined inside a prim_func",
        "define it at module level; put several functions in an @I.ir_module class",
    ),
    "classdef": ("a class cannot be defined inside a prim_func", None),
}


class _FunctionBuilder(BlockFrames, ExpressionEvaluator, NameScopes, BufferAccess, ScriptCalls):
    """Builds one PrimFunc from a ``funcdef`` tree."""

    def __init__(self, source: SourceMap, extra_vars: Mapping[str, Any]):
        self.source = source
        self.extra_vars = extra_vars
        self.scopes: list[dict[str, Any]] = [{}]
        self.frames: list[_BlockFrame | str] = []  # blocks, and "for"/"if"/"init" between them
        self.loop_ranges: dict[Var, Range] = {}
        self.loop_depths: dict[Var, int] = {}  # len(self.frames) where each loop variable is defined
        self.binding_depth = 0  # > 0 while evaluating block bindings and T.where (outside the block)
        self.block_names: set[str] = set()
        self.root_allocs: list[Buffer] = []
        self.explicit_root: BlockRealize | None = None
        self.attrs: dict[str, Any] = {}
        self.params: list[Buffer | Var] = []
        self.predeclared: dict[int, Var] = {}
        self.thread_tags: dict[Var, str] = {}  # T.env_thread variables and their tags
        self.current: Tree | None = None

    def error(self, node: Tree | Token | None, msg: str, hint: str | None = None) -> ParseError:
        if span_of(node) is None:
            node = self.current
        return self.source.error_at(node, msg, hint)

    def build(self, funcdef: Tree) -> PrimFunc:
        self.current = funcdef
        try:
            return self._function(funcdef)
        except ParseError:
            raise
        except RecursionError:
            raise self.error(self.current, "the program is nested too deeply to parse") from None
        except Exception as exc:
            raise self.error(
                self.current,
                f"internal error of the TVMScript parser ({type(exc).__name__}: {exc}); please report it",
            ) from exc

    # ------------------------------------------------------------ function and parameters

    def _function(self, funcdef: Tree) -> PrimFunc:
        name, params, returns, suite = funcdef.children
        if returns is not None and returns.data != "none":
            raise self.error(returns, "a prim_func returns nothing", hint="remove the return annotation")
        body = suite.children
        self._predeclare(body)
        self._params(params.children if params is not None else [])
        stmt = self._stmts(body)
        return PrimFunc(tuple(self.params), self._root(stmt), self.attrs, str(name))

    def _predeclare(self, body: list[Tree]) -> None:
        """Bind ``n = T.int32()`` (and ``n, m = T.int32(), T.int32()``) declarations first:
        parameter shapes may use them."""
        for node in body:
            if node.data != "assign" or len(node.children) != 2:
                continue
            target, value = node.children
            pairs = [(target, value)] if target.data == "name" else _pairwise_names(target, value) or []
            for name_node, item in pairs:
                self._predeclare_one(name_node, item)

    def _predeclare_one(self, name_node: Tree, value: Tree) -> None:
        if value.data != "call" or value.children[0].data != "attribute":
            return
        callee = self._value(value.children[0])
        if isinstance(callee, _TRef) and callee.name[2:] in (*namespace.T_DTYPES, "var"):
            decl = self._expr(value)
            if isinstance(decl, _VarDecl):
                var = Var(str(name_node.children[0]), decl.dtype)
                self.predeclared[id(value)] = var
                self.scopes[0][var.name] = var

    def _params(self, nodes: list[Tree]) -> None:
        scope = self.scopes[0]
        params: list[Buffer | Var | None] = [None] * len(nodes)
        # Scalars first: a buffer's shape may use a scalar parameter listed after it.
        for scalars in (True, False):
            for index, node in enumerate(nodes):
                name, annotation, default = node.children
                if (annotation is not None and annotation.data in ("attribute", "name")) != scalars:
                    continue
                self.current = node
                if any(p is not None and p.name == str(name) for p in params):
                    raise self.error(node, f"duplicate parameter {name}")
                params[index] = scope[str(name)] = self._param(str(name), annotation, default, node)
        self.params = list(params)

    def _param(self, name: str, annotation: Tree | None, default: Tree | None, node: Tree) -> Buffer | Var:
        if default is not None:
            raise self.error(default, f"parameter {name} cannot have a default value")
        usage = "T.Buffer(shape, dtype), T.handle or a scalar type such as T.int32"
        if annotation is None:
            raise self.error(
                node, f"parameter {name} needs a type annotation", hint=f"annotate it with {usage}"
            )
        kind = self._expr(annotation)
        if isinstance(kind, _BufferSpec):
            return Buffer(name, kind.shape, kind.dtype, kind.scope, **dict(kind.layout))
        dtype = self._dtype_of_ref(kind)
        if dtype is None:
            raise self.error(annotation, f"parameter {name} has an unsupported type", hint=f"use {usage}")
        return Var(name, dtype)

    # ------------------------------------------------------------ statements

    def _stmts(self, nodes: list[Tree]) -> Stmt | None:
        parts: list[Stmt] = []
        for index, node in enumerate(nodes):
            result = self._stmt(node)
            if isinstance(result, _Scoped):
                rest = self._stmts(nodes[index + 1 :])
                parts.append(result.wrap(rest if rest is not None else _noop()))
                break
            if result is not None:
                parts.append(result)
        return seq(*parts) if parts else None

    def _suite(self, suite: Tree, bindings: dict[str, Any] | None = None) -> Stmt | None:
        self.scopes.append(dict(bindings) if bindings else {})
        stmt = self._stmts(suite.children)
        self.scopes.pop()
        return stmt

    def _nested(self, frame: str, suite: Tree, bindings: dict[str, Any] | None = None) -> Stmt | None:
        self.frames.append(frame)
        stmt = self._suite(suite, bindings)
        self.frames.pop()
        return stmt

    def _stmt(self, node: Tree) -> Stmt | _Scoped | None:
        self.current = node
        handler = _STATEMENTS.get(node.data)
        if handler is None:
            message, hint = _REJECTED[node.data]
            raise self.error(node, message, hint)
        try:
            return handler(self, node)
        except _NODE_ERRORS as exc:
            raise self.error(node, str(exc)) from None

    def _s_pass(self, node: Tree) -> None:
        return None

    def _s_expr(self, node: Tree) -> Stmt | None:
        (expr,) = node.children
        if expr.data == "string":  # a docstring
            return None
        value = self._expr(expr)
        if isinstance(value, _Directive):
            return self._directive(value)
        if isinstance(value, _Marker):
            raise self._misuse(value, expr)
        if isinstance(value, PrimExpr):
            return Evaluate(value)
        raise self.error(
            expr, "this statement has no effect", hint="wrap a call in T.evaluate(...) or store it"
        )

    def _s_assign(self, node: Tree) -> Stmt | _Scoped | None:
        *targets, value_node = node.children
        if len(targets) > 1:
            raise self.error(node, "chained assignment (a = b = ...) is not supported")
        (target,) = targets
        if target.data == "subscript":
            return self._store(target, self._value(value_node), value_node)
        pairs = _pairwise_names(target, value_node)
        declared = [self._expr(item) for _, item in pairs or []]
        if pairs and all(isinstance(d, _VarDecl) for d in declared):
            for (name_node, item), decl in zip(pairs, declared):  # `n, m = T.int32(), T.int32()`
                self._bind(str(name_node.children[0]), decl, item)
            return None
        value = self._expr(value_node)
        if target.data in _TUPLE_TREES:
            return self._unpack(target, value, value_node)
        if target.data != "name":
            raise self.error(
                target, "cannot assign to this", hint="assign to a name or a buffer element A[i]"
            )
        return self._bind(str(target.children[0]), value, value_node)

    def _s_annassign(self, node: Tree) -> _Scoped:
        target, annotation, value_node = node.children
        if target.data != "name":
            raise self.error(target, "only a name can carry a type annotation here")
        name = str(target.children[0])
        dtype = self._dtype_of_ref(self._expr(annotation))
        if dtype is None or dtype == "handle":
            raise self.error(annotation, f"{name} needs a scalar type such as T.int32 or T.float32")
        if value_node is None:
            raise self.error(
                node, f"{name} is declared without a value", hint=f"write {name}: T.{dtype} = value"
            )
        value = self._convert(self._value(value_node), dtype, value_node, name)
        return self._let(name, dtype, value)

    def _s_augassign(self, node: Tree) -> Stmt:
        target, operator_token, value_node = node.children
        symbol = str(operator_token)[:-1]
        if target.data != "subscript":
            raise self.error(
                target,
                f"{operator_token} needs a buffer element on the left, e.g. C[i] {operator_token} x",
                hint="names in TVMScript cannot be reassigned; use a buffer",
            )
        load = self._expr(target)
        if not isinstance(load, BufferLoad):
            raise self.error(target, f"{operator_token} needs a buffer element on the left")
        value = self._value(value_node)
        if symbol == "**":
            updated = self._power(load, value)
        elif symbol in _IR_ARITH:
            updated = self._arith(symbol, load, value)
        else:
            raise self.error(node, f"{operator_token} is not supported in TVMScript")
        return self._store_to(load.buffer, load.indices, updated, value_node)

    def _s_if(self, node: Tree) -> Stmt | None:
        cond, then, *rest = node.children
        orelse = rest.pop()
        branches = [(cond, then)] + [tuple(clause.children) for clause in rest]
        return self._if_chain(branches, orelse)

    def _if_chain(self, branches: list[tuple[Tree, Tree]], orelse: Tree | None) -> Stmt | None:
        (cond_node, suite), later = branches[0], branches[1:]
        cond = self._value(cond_node)

        def otherwise() -> Stmt | None:
            if later:
                return self._if_chain(later, orelse)
            return self._nested("if", orelse) if orelse is not None else None

        if cond is None or isinstance(cond, (bool, int)) and not isinstance(cond, PrimExpr):
            # A condition on Python constants selects a branch while parsing.
            return self._nested("if", suite) if cond else otherwise()
        cond = self._as_prim(cond, cond_node)
        if not _dt.is_bool(cond.dtype):
            raise self.error(
                cond_node, f"an if condition must be a boolean expression, not {_describe(cond)}"
            )
        then = self._nested("if", suite)
        return IfThenElse(cond, then if then is not None else _noop(), otherwise())

    def _s_for(self, node: Tree) -> Stmt:
        target, iterable, body, orelse = node.children
        if orelse is not None:
            raise self.error(node, "for ... else is not supported in TVMScript")
        spec = self._expr(iterable)
        if isinstance(spec, _GridSpec):
            loops = spec.loops
        elif isinstance(spec, _LoopSpec):
            loops = (spec,)
        else:
            raise self.error(
                iterable,
                f"cannot loop over {_describe(spec)}",
                hint="loop over range(...), T.grid(...) or T.serial/parallel/vectorized/unroll/...",
            )
        names = self._target_names(target)
        if len(names) != len(loops):
            raise self.error(
                target,
                f"{spec.name}(...) makes {_plural(len(loops), 'loop')} but "
                f"{_plural(len(names), 'loop variable')} {'is' if len(names) == 1 else 'are'} named",
            )
        bindings: dict[str, Var] = {}
        loop_vars = []
        for (name, name_node), loop in zip(names, loops):
            if name in bindings:
                raise self.error(name_node, f"loop variable {name} is named twice")
            var = bindings[name] = Var(name, loop.min.dtype)
            self.loop_ranges[var] = Range(loop.min, loop.extent)
            self.loop_depths[var] = len(self.frames)
            loop_vars.append(var)
        stmt = self._nested("for", body, bindings)
        stmt = stmt if stmt is not None else _noop()
        for var, loop in zip(reversed(loop_vars), reversed(loops)):
            stmt = For(var, loop.min, loop.extent, loop.kind, stmt, loop.thread, dict(loop.annotations))
        return stmt

    def _target_names(self, target: Tree) -> list[tuple[str, Tree]]:
        items = target.children if target.data in _TUPLE_TREES else [target]
        names = []
        for item in items:
            if item is None:
                continue
            if item.data != "name":
                raise self.error(item, "expected a plain name here")
            names.append((str(item.children[0]), item))
        return names

    def _s_with(self, node: Tree) -> Stmt | None:
        *items, body = node.children
        if len(items) > 1:
            raise self.error(items[1], "a with statement takes one context here")
        expr, target = items[0].children
        context = self._expr(expr)
        if isinstance(context, _Context) and context.name in ("T.block", "T.init"):
            if target is not None:
                raise self.error(target, f"with {context.name}(...) takes no 'as' name")
            if context.name == "T.block":
                return self._block(context.label, body, expr)
            return self._init(body, expr)
        if isinstance(context, _Context) and context.var is not None:  # with T.let(x, value):
            if target is not None:
                raise self.error(target, "with T.let(x, value) takes no 'as' name; x is the variable")
            inner = self._suite(body)
            return LetStmt(context.var, context.value, inner if inner is not None else _noop())
        if isinstance(context, _ThreadLaunch) and context.var is not None:
            if target is not None:
                raise self.error(target, "with T.launch_thread(tx, n) takes no 'as' name; tx is the thread")
            inner = self._launch(context.var, context).wrap
            stmt = self._nested("for", body)
            return inner(stmt if stmt is not None else _noop())
        if isinstance(context, _ThreadLaunch) and target is not None and target.data == "name":
            # with T.launch_thread("threadIdx.x", n) as tx: (TVM's form) launches a new thread variable
            name = str(target.children[0])
            var = Var(name, context.extent.dtype)
            inner = self._launch(var, context).wrap
            stmt = self._nested("for", body, {name: var})
            return inner(stmt if stmt is not None else _noop())
        if isinstance(context, _Context) or isinstance(context, _BufferDecl) and context.kind == "decl":
            if target is None or target.data != "name":
                raise self.error(expr, f"with {context.name}(...) needs 'as name'")
            name = str(target.children[0])
            if isinstance(context, _Context):
                var = Var(name, context.value.dtype)
                inner = self._suite(body, {name: var})
                return LetStmt(var, context.value, inner if inner is not None else _noop())
            buffer = Buffer(name, context.shape, context.dtype, context.scope, **dict(context.layout))
            inner = self._suite(body, {name: buffer})
            return Allocate(buffer, inner if inner is not None else _noop())
        raise self.error(
            expr,
            f"cannot use {_describe(context)} in a with statement",
            hint="with takes T.block(name), T.init(), T.LetStmt(value) or T.decl_buffer(...)",
        )


_STATEMENTS: dict[str, Callable] = {
    "expr_stmt": _FunctionBuilder._s_expr,
    "assign": _FunctionBuilder._s_assign,
    "annassign": _FunctionBuilder._s_annassign,
    "augassign": _FunctionBuilder._s_augassign,
    "pass_stmt": _FunctionBuilder._s_pass,
    "if_stmt": _FunctionBuilder._s_if,
    "for_stmt": _FunctionBuilder._s_for,
    "with_stmt": _FunctionBuilder._s_with,
}


def _pairwise_names(target: Tree, value: Tree) -> list[tuple[Tree, Tree]] | None:
    """``a, b = x, y`` as the pairs (a, x), (b, y) when every target is a name; else None."""
    if target.data not in _TUPLE_TREES or value.data not in _TUPLE_TREES:
        return None
    names = [n for n in target.children if n is not None]
    items = [n for n in value.children if n is not None]
    if len(names) != len(items) or any(n.data != "name" for n in names):
        return None
    return list(zip(names, items))
