"""TVMScript text to IR: ``parse(text)`` gives a PrimFunc or an IRModule.

Flow: the text is dedented, tokenized and parsed by lark (LALR, grammar.lark)
with an indentation postlex; ``_FunctionBuilder`` then walks lark's tree with
scopes for loop variables, block iterators, let variables and buffers, and
builds nodes through tir.op (which folds constants and promotes dtypes).
Script calls (``T.axis.remap``, ``T.alloc_buffer``, ...) are handlers that
evaluate their argument trees into values or markers (a loop to open, a buffer
to declare, a directive for the enclosing block); statements consume them.
Free names come from ``extra_vars`` (a decorated function's globals and
closure) and must be plain constants: no user code ever runs. Every problem
leaves as a ParseError located in the user's file (tir/script/errors.py).
``T.prim_func`` and ``I.ir_module`` (namespace.py) call ``parse_function`` and
``parse_module``.
"""

from __future__ import annotations

import ast
import difflib
import functools
import inspect
import operator
import re
import sys
import textwrap
from collections import ChainMap
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from lark import Lark, Token, Tree
from lark.exceptions import LarkError
from lark.lark import PostLex

from .. import dtype as _dt
from .. import op
from ..buffer import Buffer, BufferRegion, normalize_scope
from ..expr import (
    Add,
    Broadcast,
    BufferLoad,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    IterKind,
    IterVar,
    Let,
    PrimExpr,
    Ramp,
    Range,
    StringImm,
    Var,
    const,
)
from ..function import IRModule, PrimFunc
from ..stmt import (
    THREAD_TAGS,
    Allocate,
    Block,
    BlockRealize,
    BufferStore,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    LetStmt,
    Stmt,
    seq,
)
from . import namespace
from .errors import IndentationProblem, ParseError, SourceMap, from_lark, span_of

__all__ = ["parse", "parse_function", "parse_module"]

# ---------------------------------------------------------------- lexing and lark


class _Indentation(PostLex):
    """Turns newlines into _INDENT/_DEDENT tokens (newlines inside brackets are whitespace)."""

    always_accept = ("_NEWLINE",)
    _OPEN = frozenset({"LPAR", "LSQB", "LBRACE"})
    _CLOSE = frozenset({"RPAR", "RSQB", "RBRACE"})

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        depth = 0
        levels = [0]
        indent_char = ""
        token = None
        for token in stream:
            kind = token.type
            if kind in self._OPEN:
                depth += 1
            elif kind in self._CLOSE:
                depth = max(depth - 1, 0)
            elif kind == "_NEWLINE":
                if depth:
                    continue
                yield token
                if "\n" in token:
                    indent = token.rsplit("\n", 1)[1]
                    indent_char = self._check_chars(indent, indent_char, token)
                    yield from self._indent_tokens(indent, levels, token)
                continue
            yield token
        for _ in levels[1:]:
            yield Token.new_borrow_pos("_DEDENT", "", token)

    @staticmethod
    def _check_chars(indent: str, indent_char: str, token: Token) -> str:
        if not indent:
            return indent_char
        if indent.count(indent[0]) != len(indent) or (indent_char and indent[0] != indent_char):
            raise IndentationProblem(
                "inconsistent use of tabs and spaces in indentation",
                token.end_line,
                1,
                hint="indent with spaces only (4 per level)",
            )
        return indent[0]

    @staticmethod
    def _indent_tokens(indent: str, levels: list[int], token: Token) -> Iterator[Token]:
        width = len(indent)
        if width > levels[-1]:
            levels.append(width)
            yield Token.new_borrow_pos("_INDENT", indent, token)
            return
        while width < levels[-1]:
            levels.pop()
            yield Token.new_borrow_pos("_DEDENT", indent, token)
        if width != levels[-1]:
            raise IndentationProblem(
                "unindent does not match any outer indentation level",
                token.end_line,
                token.end_column,
                hint=f"indent this line by {levels[-1]} characters like the block it belongs to",
            )


@functools.cache
def _lark() -> Lark:
    grammar = Path(__file__).with_name("grammar.lark").read_text()
    return Lark(
        grammar,
        parser="lalr",
        postlex=_Indentation(),
        start="file_input",
        propagate_positions=True,
        maybe_placeholders=True,
        cache=True,
    )


@functools.cache
def _literals() -> dict[str, str]:
    return {t.name: t.pattern.value for t in _lark().terminals if t.pattern.type == "str"}


# ---------------------------------------------------------------- script values

_NODE_ERRORS = (TypeError, ValueError, IndexError, NameError, ZeroDivisionError, OverflowError)


@dataclass(frozen=True)
class _TRef:
    """A (partial) name in the T namespace: ``T``, ``T.axis``, ``T.float32``."""

    path: tuple[str, ...]

    @property
    def name(self) -> str:
        return ".".join(("T", *self.path))


class _Builtin:
    def __init__(self, name: str):
        self.name = name


_T_ROOT = _TRef(())
_I_REF = _Builtin("I")
_RANGE = _Builtin("range")
_BUILTINS = {"T": _T_ROOT, "I": _I_REF, "range": _RANGE}


class _Marker:
    """A value only one statement form can use, e.g. a loop to open or a buffer to declare."""

    name: str
    usage = ""


@dataclass(frozen=True)
class _VarDecl(_Marker):
    name: str
    dtype: str
    usage = "assign it to a name: n = T.int32()"


@dataclass(frozen=True)
class _BufferDecl(_Marker):
    name: str
    kind: str  # "alloc", "decl" or "match"
    shape: tuple[PrimExpr, ...]
    dtype: str
    scope: str
    param: Var | None = None
    usage = "assign it to a name: B = T.alloc_buffer(...)"


@dataclass(frozen=True)
class _BufferSpec(_Marker):
    name: str
    shape: tuple[PrimExpr, ...]
    dtype: str
    scope: str
    usage = "T.Buffer(...) is the type of a parameter; in the body use T.alloc_buffer or T.decl_buffer"


@dataclass(frozen=True)
class _AxisDecl(_Marker):
    name: str
    kind: IterKind
    dom: Range
    value: PrimExpr
    usage = "assign it to the block iterator's name: vi = T.axis.spatial(n, i)"


@dataclass(frozen=True)
class _AxisDecls(_Marker):
    name: str
    axes: tuple[_AxisDecl, ...]
    usage = 'unpack it into the block iterators: vi, vj = T.axis.remap("SS", [i, j])'


@dataclass(frozen=True)
class _LoopSpec(_Marker):
    name: str
    kind: ForKind
    min: PrimExpr
    extent: PrimExpr
    thread: str | None = None
    annotations: dict = field(default_factory=dict)
    usage = "loop over it: for i in range(n):"


@dataclass(frozen=True)
class _GridSpec(_Marker):
    name: str
    loops: tuple[_LoopSpec, ...]
    usage = "loop over it: for i, j in T.grid(n, m):"


@dataclass(frozen=True)
class _Context(_Marker):
    """``T.block(name)``, ``T.init()`` or ``T.LetStmt(value)``: the head of a with statement."""

    name: str
    label: str | None = None
    value: PrimExpr | None = None
    usage = 'open it with a with statement: with T.block("name"):'


@dataclass(frozen=True)
class _Directive(_Marker):
    """A statement-only call: T.reads, T.writes, T.where, T.block_attr, T.func_attr, T.evaluate."""

    name: str
    payload: Any
    node: Tree
    usage = "write it as a statement of its own"


class _Scoped:
    """A statement whose body is the rest of its block (LetStmt, Allocate)."""

    def __init__(self, wrap: Callable[[Stmt], Stmt]):
        self.wrap = wrap


@dataclass(eq=False)
class _BlockFrame:
    """What the statements directly inside a ``with T.block`` declare."""

    name: str
    iter_vars: list[IterVar] = field(default_factory=list)
    iter_values: list[PrimExpr] = field(default_factory=list)
    reads: tuple[BufferRegion, ...] | None = None
    writes: tuple[BufferRegion, ...] | None = None
    predicate: PrimExpr | None = None
    annotations: dict = field(default_factory=dict)
    alloc_buffers: list[Buffer] = field(default_factory=list)
    init: Stmt | None = None


@dataclass(frozen=True)
class _Call:
    """A script call being evaluated: its full name ("T.axis.remap") and its tree."""

    name: str
    node: Tree


def _noop() -> Stmt:
    return Evaluate(IntImm(0, "int32"))


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, PrimExpr)


def _is_plain_constant(value: Any) -> bool:
    """Values a script may take from the enclosing Python scope; exact types, so no user code runs."""
    if value is None or type(value) in (int, float, bool, str):
        return True
    return type(value) is tuple and all(_is_plain_constant(item) for item in value)


def _describe(value: Any) -> str:
    if isinstance(value, Buffer):
        return f"buffer {value.name}"
    if isinstance(value, Var):
        return f"variable {value.name} ({value.dtype})"
    if isinstance(value, PrimExpr):
        return f"a {value.dtype} expression"
    if isinstance(value, (_TRef, _Builtin)):
        return value.name
    if isinstance(value, _Marker):
        return f"{value.name}(...)"
    if isinstance(value, (bool, int, float, str)):
        return f"the {type(value).__name__} {value!r}"
    return "None" if value is None else f"a {type(value).__name__}"


def _python_constant(value: Any) -> Any:
    """Attributes hold Python values: TVM's spellings ``T.bool(True)``, ``T.int64(4)`` unwrap."""
    if isinstance(value, IntImm):
        return bool(value.value) if _dt.is_bool(value.dtype) else value.value
    return value.value if isinstance(value, FloatImm) else value


def _plural(count: int, word: str, plural: str | None = None) -> str:
    return f"{count} {word if count == 1 else plural or word + 's'}"


def _index_dtype(*values: int | PrimExpr) -> str:
    """The integer dtype loop bounds, domains and regions share: the widest one given."""
    dtypes = [v.dtype for v in values if isinstance(v, PrimExpr)]
    if any(not -(2**31) <= v < 2**31 for v in values if not isinstance(v, PrimExpr)):
        dtypes.append("int64")
    return max(dtypes, key=_dt.bits_of, default="int32")


def _as_index(value: int | PrimExpr, dtype: str) -> PrimExpr:
    if not isinstance(value, PrimExpr):
        return IntImm(value, dtype)
    return value if value.dtype == dtype else op.cast(dtype, value)


def _extent(lo: PrimExpr, hi: PrimExpr) -> PrimExpr:
    """``hi - lo`` simplified, so that a region ``vi:vi + 3`` has the extent 3.

    The printer writes a range as ``min:min + extent``; taking ``extent`` back as
    written keeps print-and-parse exact whatever form the extent has.
    """
    difference = op.sub(hi, lo)
    if isinstance(difference, IntImm):
        return difference
    from ..structural import structural_equal

    if isinstance(hi, Add) and structural_equal(hi.a, lo):
        return hi.b
    from ..arith import Analyzer

    return Analyzer().simplify(difference)


def _limit(dtype: str, largest: bool) -> PrimExpr:
    """The largest (or lowest) finite value of a scalar dtype."""
    if _dt.lanes_of(dtype) != 1:
        raise ValueError(f"T.max_value/T.min_value take a scalar dtype, got {dtype!r}")
    if _dt.is_float(dtype):
        value = {"float16": 65504.0, "float32": 3.4028234663852886e38, "float64": sys.float_info.max}[dtype]
        return FloatImm(value if largest else -value, dtype)
    bits = _dt.bits_of(dtype)
    if _dt.is_bool(dtype):
        return IntImm(int(largest), dtype)
    if _dt.is_uint(dtype):
        return IntImm(2**bits - 1 if largest else 0, dtype)
    return IntImm(2 ** (bits - 1) - 1 if largest else -(2 ** (bits - 1)), dtype)


def _same_dtype(a: Any, b: Any) -> tuple[PrimExpr, PrimExpr]:
    """Operands of a node built directly (not through tir.op): numbers take the other's dtype."""
    if not isinstance(a, PrimExpr):
        a = const(a, b.dtype if isinstance(b, PrimExpr) else None)
    if not isinstance(b, PrimExpr):
        b = const(b, a.dtype)
    if a.dtype != b.dtype:
        raise TypeError(f"operands have different dtypes: {a.dtype} and {b.dtype}; convert one with T.Cast")
    return a, b


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
_LOOP_KINDS = {
    "T.serial": ForKind.SERIAL,
    "T.parallel": ForKind.PARALLEL,
    "T.vectorized": ForKind.VECTORIZED,
    "T.unroll": ForKind.UNROLLED,
}
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


# ---------------------------------------------------------------- the builder


class _FunctionBuilder:
    """Builds one PrimFunc from a ``funcdef`` tree."""

    def __init__(self, source: SourceMap, extra_vars: Mapping[str, Any]):
        self.source = source
        self.extra_vars = extra_vars
        self.scopes: list[dict[str, Any]] = [{}]
        self.frames: list[_BlockFrame | str] = []  # blocks, and "for"/"if"/"init" between them
        self.loop_ranges: dict[Var, Range] = {}
        self.block_names: set[str] = set()
        self.root_allocs: list[Buffer] = []
        self.explicit_root: BlockRealize | None = None
        self.attrs: dict[str, Any] = {}
        self.params: list[Buffer | Var] = []
        self.predeclared: dict[int, Var] = {}
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
        """Bind ``n = T.int32()`` declarations first: parameter shapes may use them."""
        for node in body:
            if node.data != "assign" or len(node.children) != 2 or node.children[0].data != "name":
                continue
            value = node.children[1]
            if value.data != "call" or value.children[0].data != "attribute":
                continue
            callee = self._value(value.children[0])
            if isinstance(callee, _TRef) and callee.name[2:] in (*namespace.T_DTYPES, "var"):
                decl = self._expr(value)
                if isinstance(decl, _VarDecl):
                    var = Var(str(node.children[0].children[0]), decl.dtype)
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
            return Buffer(name, kind.shape, kind.dtype, kind.scope)
        dtype = self._dtype_of_ref(kind)
        if dtype is None:
            raise self.error(annotation, f"parameter {name} has an unsupported type", hint=f"use {usage}")
        return Var(name, dtype)

    @staticmethod
    def _dtype_of_ref(value: Any) -> str | None:
        if isinstance(value, _TRef) and len(value.path) == 1:
            name = value.path[0]
            if name in namespace.T_DTYPES or name == "handle":
                return name
        return None

    def _root(self, stmt: Stmt | None) -> Stmt:
        """TensorIR bodies live in a block named "root"; block-free (lowered) bodies stay as they are."""
        if self.explicit_root is not None:
            if stmt is not self.explicit_root:
                raise self.error(None, 'with T.block("root") must be the whole function body')
            if not self.root_allocs:
                return stmt
            block = stmt.block
            return replace(
                stmt, block=replace(block, alloc_buffers=(*self.root_allocs, *block.alloc_buffers))
            )
        body = stmt if stmt is not None else _noop()
        if not self.block_names and not self.root_allocs:
            return body
        root = Block("root", (), (), (), body, alloc_buffers=tuple(self.root_allocs))
        return BlockRealize((), IntImm(1, "bool"), root)

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
        if isinstance(context, _Context) or isinstance(context, _BufferDecl) and context.kind == "decl":
            if target is None or target.data != "name":
                raise self.error(expr, f"with {context.name}(...) needs 'as name'")
            name = str(target.children[0])
            if isinstance(context, _Context):
                var = Var(name, context.value.dtype)
                inner = self._suite(body, {name: var})
                return LetStmt(var, context.value, inner if inner is not None else _noop())
            buffer = Buffer(name, context.shape, context.dtype, context.scope)
            inner = self._suite(body, {name: buffer})
            return Allocate(buffer, inner if inner is not None else _noop())
        raise self.error(
            expr,
            f"cannot use {_describe(context)} in a with statement",
            hint="with takes T.block(name), T.init(), T.LetStmt(value) or T.decl_buffer(...)",
        )

    # ------------------------------------------------------------ blocks

    def _block(self, name: str, body: Tree, node: Tree) -> Stmt | None:
        at_top = not self.frames
        if name in self.block_names:
            raise self.error(
                node,
                f"duplicate block name {name!r}; block names must be unique in a function",
                hint="rename one",
            )
        if name == "root" and not at_top:
            raise self.error(node, 'the block name "root" is reserved for the outermost block of a function')
        self.block_names.add(name)
        frame = _BlockFrame(name)
        self.frames.append(frame)
        stmt = self._suite(body)
        self.frames.pop()
        block = Block(
            name,
            tuple(frame.iter_vars),
            frame.reads or (),
            frame.writes or (),
            stmt if stmt is not None else _noop(),
            frame.init,
            tuple(frame.alloc_buffers),
            frame.annotations,
        )
        predicate = frame.predicate if frame.predicate is not None else IntImm(1, "bool")
        if name == "root" and at_top:
            self.explicit_root = BlockRealize((), predicate, block)
            return self.explicit_root
        if frame.reads is None or frame.writes is None:
            from ..analysis.block_access import infer_access_regions

            reads, writes = infer_access_regions(block)
            block = replace(
                block,
                reads=frame.reads if frame.reads is not None else reads,
                writes=frame.writes if frame.writes is not None else writes,
            )
        return BlockRealize(tuple(frame.iter_values), predicate, block)

    def _block_frame(self, what: str, node: Tree) -> _BlockFrame:
        if self.frames and isinstance(self.frames[-1], _BlockFrame):
            return self.frames[-1]
        inside = any(isinstance(frame, _BlockFrame) for frame in self.frames)
        hint = "move it to the top of the block body" if inside else 'put it in a with T.block("name"): body'
        raise self.error(node, f"{what}(...) is only valid directly inside a with T.block(...)", hint=hint)

    def _init(self, body: Tree, node: Tree) -> None:
        frame = self._block_frame("T.init", node)
        if frame.init is not None:
            raise self.error(node, f"block {frame.name!r} has two T.init() statements")
        stmt = self._nested("init", body)
        frame.init = stmt if stmt is not None else _noop()

    def _directive(self, directive: _Directive) -> Stmt | None:
        name, payload, node = directive.name, directive.payload, directive.node
        if name == "T.evaluate":
            return Evaluate(payload)
        if name == "T.func_attr":
            if self.frames:
                raise self.error(node, "T.func_attr(...) belongs at the top level of the function body")
            self.attrs.update(payload)
            return None
        frame = self._block_frame(name, node)
        if name == "T.block_attr":
            frame.annotations.update(payload)
            return None
        field_name = {"T.reads": "reads", "T.writes": "writes", "T.where": "predicate"}[name]
        if getattr(frame, field_name) is not None:
            raise self.error(node, f"{name}(...) appears twice in block {frame.name!r}")
        setattr(frame, field_name, payload)
        return None

    # ------------------------------------------------------------ bindings

    def _bind(self, name: str, value: Any, value_node: Tree) -> _Scoped | None:
        scope = self.scopes[-1]
        if isinstance(value, _VarDecl):
            var = self.predeclared.get(id(value_node))
            scope[name] = var if var is not None else Var(name, value.dtype)
            return None
        if isinstance(value, _BufferDecl):
            return self._declare_buffer(name, value, value_node)
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

    def _let(self, name: str, dtype: str, value: PrimExpr) -> _Scoped:
        var = Var(name, dtype)
        self.scopes[-1][name] = var
        return _Scoped(lambda body: LetStmt(var, value, body))

    def _declare_axis(self, name: str, decl: _AxisDecl, node: Tree) -> None:
        frame = self._block_frame(decl.name, node)
        var = Var(name, decl.value.dtype)
        frame.iter_vars.append(IterVar(var, decl.dom, decl.kind))
        frame.iter_values.append(decl.value)
        self.scopes[-1][name] = var

    def _declare_buffer(self, name: str, decl: _BufferDecl, node: Tree) -> _Scoped | None:
        buffer = Buffer(name, decl.shape, decl.dtype, decl.scope)
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

    def _misuse(self, value: _Marker, node: Tree) -> ParseError:
        return self.error(node, f"{value.name}(...) cannot be used here", hint=value.usage)

    # ------------------------------------------------------------ stores

    def _store(self, target: Tree, value: Any, value_node: Tree) -> Stmt:
        base_node, *index_nodes = target.children
        buffer = self._value(base_node)
        if not isinstance(buffer, Buffer):
            raise self.error(
                base_node, f"cannot store into an element of {_describe(buffer)}: it is not a buffer"
            )
        indices = self._indices(target, buffer, index_nodes)
        return self._store_to(buffer, indices, value, value_node)

    def _store_to(self, buffer: Buffer, indices: tuple[PrimExpr, ...], value: Any, node: Tree) -> Stmt:
        lanes = max((_dt.lanes_of(i.dtype) for i in indices), default=1)
        value = self._convert(value, _dt.with_lanes(buffer.dtype, lanes), node, f"buffer {buffer.name}")
        return BufferStore(buffer, value, indices)

    def _convert(self, value: Any, dtype: str, node: Tree, into: str) -> PrimExpr:
        """``value`` as ``dtype``: constants are cast, other expressions must already match."""
        base, lanes = _dt.element_of(dtype), _dt.lanes_of(dtype)
        hint = f'convert it explicitly with T.Cast("{base}", ...)'
        if isinstance(value, (int, float)) and not isinstance(value, PrimExpr):
            if isinstance(value, float) and not _dt.is_float(base):
                raise self.error(node, f"{into} holds {base} but the value is the float {value}", hint=hint)
            value = const(value, base) if isinstance(value, float) else op.cast(base, const(value))
        elif isinstance(value, (IntImm, FloatImm)) and value.dtype != base:
            if _dt.is_float(value.dtype) and not _dt.is_float(base):
                raise self.error(node, f"{into} holds {base} but the value is {value.dtype}", hint=hint)
            value = op.cast(base, value)
        elif not isinstance(value, PrimExpr):
            raise self.error(node, f"{into} holds {base} values, not {_describe(value)}")
        elif _dt.element_of(value.dtype) != base:
            raise self.error(node, f"{into} holds {base} but the value is {value.dtype}", hint=hint)
        if _dt.lanes_of(value.dtype) == lanes:
            return value
        if _dt.lanes_of(value.dtype) == 1:
            return op.broadcast(value, lanes)
        raise self.error(node, f"{into} takes {_plural(lanes, 'lane')} here but the value has {value.dtype}")

    def _indices(self, node: Tree, buffer: Buffer, index_nodes: list[Tree]) -> tuple[PrimExpr, ...]:
        if any(n.data == "slice" for n in index_nodes):
            raise self.error(
                node, "a slice is only allowed in T.reads/T.writes regions", hint="index one element"
            )
        values = [self._value(n) for n in index_nodes]
        if len(values) == 1 and isinstance(values[0], tuple):  # A[()] and A[(i, j)]
            values = list(values[0])
            index_nodes = index_nodes * len(values)
        self._check_rank(node, buffer, len(values))
        return tuple(self._index(v, n, buffer) for v, n in zip(values, index_nodes))

    def _check_rank(self, node: Tree, buffer: Buffer, count: int) -> None:
        if count != buffer.ndim:
            raise self.error(
                node,
                f"buffer {buffer.name} has {_plural(buffer.ndim, 'dimension')} "
                f"but is indexed with {_plural(count, 'index', 'indices')}",
            )

    def _index(self, value: Any, node: Tree, buffer: Buffer) -> PrimExpr:
        if isinstance(value, int) and not isinstance(value, bool):
            return const(value)
        if isinstance(value, PrimExpr) and _dt.is_integer(value.dtype):
            return value
        raise self.error(node, f"an index of buffer {buffer.name} must be an integer, not {_describe(value)}")

    def _regions(self, node: Tree) -> list[BufferRegion]:
        """The regions one argument of T.reads/T.writes names: A[vi, 0:16], A, or a list of them."""
        if node.data in ("list", "tuple"):
            return [region for item in node.children if item is not None for region in self._regions(item)]
        if node.data == "subscript":
            base_node, *index_nodes = node.children
            buffer = self._value(base_node)
            if isinstance(buffer, Buffer):
                return [BufferRegion(buffer, self._ranges(node, buffer, index_nodes))]
        value = self._value(node)
        if isinstance(value, Buffer):
            return [value.full_region()]
        raise self.error(
            node, f"{_describe(value)} is not a buffer region", hint="write A[vi, 0:16] or a buffer name"
        )

    def _ranges(self, node: Tree, buffer: Buffer, index_nodes: list[Tree]) -> tuple[Range, ...]:
        if len(index_nodes) == 1 and index_nodes[0].data == "tuple" and not index_nodes[0].children:
            index_nodes = []
        self._check_rank(node, buffer, len(index_nodes))
        ranges = []
        for dim, item in enumerate(index_nodes):
            if item.data != "slice":
                point = self._index(self._value(item), item, buffer)
                ranges.append(Range(point, IntImm(1, point.dtype)))
                continue
            start, stop, step = item.children
            if step is not None:
                raise self.error(step, "a region slice cannot have a step")
            lo = self._index(self._value(start), start, buffer) if start is not None else 0
            hi = self._index(self._value(stop), stop, buffer) if stop is not None else buffer.shape[dim]
            dtype = _index_dtype(lo, hi)
            lo, hi = _as_index(lo, dtype), _as_index(hi, dtype)
            ranges.append(Range(lo, _extent(lo, hi)))
        return tuple(ranges)

    # ------------------------------------------------------------ expressions

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

    def _e_name(self, node: Tree) -> Any:
        name = str(node.children[0])
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        if name in _BUILTINS:
            return _BUILTINS[name]
        if name in self.extra_vars:
            return self._free_value(name, self.extra_vars[name], node)
        known = [n for scope in self.scopes for n in scope] + list(_BUILTINS)
        close = difflib.get_close_matches(name, known, n=1)
        hint = f"did you mean {close[0]}?" if close else None
        raise self.error(node, f"name {name!r} is not defined", hint=hint)

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
        if isinstance(base, Buffer) and attr in ("shape", "dtype", "name", "ndim"):
            return getattr(base, attr)
        raise self.error(attr_token, f"{_describe(base)} has no attribute {attr!r} in TVMScript")

    def _e_subscript(self, node: Tree) -> Any:
        base_node, *index_nodes = node.children
        base = self._value(base_node)
        if isinstance(base, Buffer):
            return BufferLoad(base, self._indices(node, base, index_nodes))
        if isinstance(base, _TRef) and base.path == ("Buffer",):
            return self._invoke(_FunctionBuilder._t_Buffer, "T.Buffer", node, index_nodes, {})
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
            return self._invoke(_FunctionBuilder._range, "range", node, args, kwargs)
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

    # ------------------------------------------------------------ argument helpers

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
        label = self._str(name, "a block name")
        if not label:
            raise self.error(name, "a block name cannot be empty")
        return _Context(call.name, label)

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

    _t_axis_S, _t_axis_R, _t_axis_O = _t_axis_spatial, _t_axis_reduce, _t_axis_opaque

    def _axis(self, call: _Call, kind: IterKind, dom: Tree, binding: Tree, dtype: Tree | None) -> _AxisDecl:
        value = self._int_value(binding, "the value bound to a block iterator")
        var_dtype = self._dtype(dtype) if dtype is not None else _index_dtype(value)
        return _AxisDecl(call.name, kind, self._domain(dom, var_dtype), _as_index(value, var_dtype))

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

    def _t_Buffer(self, call: _Call, shape: Tree, dtype: Tree | None = None, scope: Tree | None = None):
        return _BufferSpec(call.name, *self._buffer_type(shape, dtype, scope))

    def _buffer_type(self, shape: Tree, dtype: Tree | None, scope: Tree | None) -> tuple[tuple, str, str]:
        return (
            self._shape(shape),
            self._dtype(dtype) if dtype is not None else "float32",
            self._scope(scope) if scope is not None else "global",
        )

    def _t_alloc_buffer(self, call: _Call, shape: Tree, dtype: Tree | None = None, scope: Tree | None = None):
        return _BufferDecl(call.name, "alloc", *self._buffer_type(shape, dtype, scope))

    def _t_decl_buffer(self, call: _Call, shape: Tree, dtype: Tree | None = None, scope: Tree | None = None):
        return _BufferDecl(call.name, "decl", *self._buffer_type(shape, dtype, scope))

    def _t_match_buffer(
        self, call: _Call, param: Tree, shape: Tree, dtype: Tree | None = None, scope: Tree | None = None
    ) -> _BufferDecl:
        handle = self._value(param)
        if not (isinstance(handle, Var) and handle.dtype == "handle" and handle in self.params):
            raise self.error(
                param,
                f"T.match_buffer matches a T.handle parameter of the function, not {_describe(handle)}",
                hint="declare the parameter as a: T.handle (each handle is matched once)",
            )
        return _BufferDecl(call.name, "match", *self._buffer_type(shape, dtype, scope), param=handle)

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
        tag = self._str(thread, "a thread tag")
        if tag not in THREAD_TAGS:
            raise self.error(
                thread, f"unknown thread tag {tag!r}", hint=f"use one of {', '.join(THREAD_TAGS)}"
            )
        return self._loop(call, ForKind.THREAD_BINDING, start, stop, annotations, tag)

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

    # ------------------------------------------------------------ T.* handlers: expressions

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

    def _t_intrinsic(self, call: _Call, *args: Tree) -> PrimExpr:
        values = [self._value(arg) for arg in args]
        return op.call(call.name[2:], *(StringImm(v) if isinstance(v, str) else v for v in values))

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
        return _limit(self._dtype(dtype), largest=True)

    def _t_min_value(self, call: _Call, dtype: Tree) -> PrimExpr:
        return _limit(self._dtype(dtype), largest=False)

    def _t_Ramp(self, call: _Call, base: Tree, stride: Tree, lanes: Tree) -> PrimExpr:
        start = self._prim(base)
        step = self._value(stride)
        step = const(step, start.dtype) if _is_number(step) else self._as_prim(step, stride)
        if step.dtype != start.dtype:
            raise self.error(stride, f"the stride is {step.dtype} but the base is {start.dtype}")
        return Ramp(start, step, self._lanes(lanes))

    def _t_Broadcast(self, call: _Call, value: Tree, lanes: Tree) -> PrimExpr:
        return Broadcast(self._prim(value), self._lanes(lanes))

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
_EXPRESSIONS: dict[str, Callable] = {
    "name": _FunctionBuilder._e_name,
    "int": _FunctionBuilder._e_int,
    "float": _FunctionBuilder._e_float,
    "string": _FunctionBuilder._e_string,
    "none": _FunctionBuilder._e_constant,
    "true": _FunctionBuilder._e_constant,
    "false": _FunctionBuilder._e_constant,
    "tuple": _FunctionBuilder._e_tuple,
    "testlist_tuple": _FunctionBuilder._e_tuple,
    "expr_tuple": _FunctionBuilder._e_tuple,
    "list": _FunctionBuilder._e_list,
    "dict": _FunctionBuilder._e_dict,
    "attribute": _FunctionBuilder._e_attribute,
    "subscript": _FunctionBuilder._e_subscript,
    "call": _FunctionBuilder._e_call,
    "arith_expr": _FunctionBuilder._e_chain,
    "term": _FunctionBuilder._e_chain,
    "and_expr": _FunctionBuilder._e_chain,
    "or_expr": _FunctionBuilder._e_chain,
    "power": _FunctionBuilder._e_power,
    "unary": _FunctionBuilder._e_unary,
    "comparison": _FunctionBuilder._e_comparison,
    "and_test": _FunctionBuilder._e_and_test,
    "or_test": _FunctionBuilder._e_or_test,
    "not_op": _FunctionBuilder._e_not_op,
    "ternary": _FunctionBuilder._e_ternary,
    "lambdef": _FunctionBuilder._e_unsupported,
    "ellipsis": _FunctionBuilder._e_unsupported,
    "slice": _FunctionBuilder._e_unsupported,
}


def _handlers() -> dict[str, Callable]:
    """T.* name -> handler; every script function of namespace.py has one (checked at import)."""
    table = {
        name: getattr(_FunctionBuilder, "_t_" + name.replace(".", "_")) for name in namespace.T_FUNCTIONS
    }
    table.update(dict.fromkeys(namespace.T_DTYPES, _FunctionBuilder._t_dtype))
    for name in namespace.T_INTRINSICS:
        table.setdefault(name, _FunctionBuilder._t_intrinsic)
    table["Buffer"] = _FunctionBuilder._t_Buffer
    return table


_HANDLERS = _handlers()
_T_PATHS = frozenset(_HANDLERS) | {"handle", "axis", "prim_func"}


@functools.cache
def _signature(handler: Callable) -> inspect.Signature:
    """The script-visible signature of a handler (without self and the call)."""
    signature = inspect.signature(handler)
    return signature.replace(parameters=list(signature.parameters.values())[2:])


# ---------------------------------------------------------------- files, modules and entry points


def _is_docstring(node: Tree) -> bool:
    return node.data == "expr_stmt" and node.children[0].data == "string"


def _split_decorated(node: Tree) -> tuple[list[Tree], Tree]:
    if node.data == "decorated":
        *decorators, definition = node.children
        return decorators, definition
    return [], node


def _decorator_name(decorator: Tree) -> str | None:
    """The last name of a decorator: ``T.prim_func(private=True)`` -> "prim_func"."""
    expr = decorator.children[0]
    if expr.data == "call":
        expr = expr.children[0]
    if expr.data == "attribute":
        return str(expr.children[1])
    return str(expr.children[0]) if expr.data == "name" else None


def _check_decorators(decorators: list[Tree], expected: str, source: SourceMap) -> None:
    for index, decorator in enumerate(decorators):
        if index or _decorator_name(decorator) != expected:
            usage = (
                "a function takes @T.prim_func" if expected == "prim_func" else "a class takes @I.ir_module"
            )
            raise source.error_at(decorator, "unsupported decorator", hint=f"{usage} and nothing else")


def _build(tree: Tree, source: SourceMap, extra_vars: Mapping[str, Any]) -> PrimFunc | IRModule:
    definitions = []
    for item in tree.children:
        if not isinstance(item, Tree) or item.data == "import_stmt" or _is_docstring(item):
            continue
        if item.data not in ("decorated", "funcdef", "classdef"):
            raise source.error_at(
                item,
                "a script holds one @T.prim_func function or one @I.ir_module class",
                hint="module-level statements other than imports are not part of a script",
            )
        definitions.append(item)
    if len(definitions) != 1:
        where = definitions[1] if definitions else None
        raise source.error_at(
            where,
            "a script holds exactly one @T.prim_func function or one @I.ir_module class",
            hint="put several functions in an @I.ir_module class",
        )
    decorators, definition = _split_decorated(definitions[0])
    if definition.data == "funcdef":
        _check_decorators(decorators, "prim_func", source)
        return _FunctionBuilder(source, extra_vars).build(definition)
    _check_decorators(decorators, "ir_module", source)
    return _build_module(definition, source, extra_vars)


def _build_module(classdef: Tree, source: SourceMap, extra_vars: Mapping[str, Any]) -> IRModule:
    name, bases, suite = classdef.children
    if bases is not None:
        raise source.error_at(bases, "an @I.ir_module class takes no base classes")
    functions: dict[str, PrimFunc] = {}
    for item in suite.children:
        if _is_docstring(item) or item.data == "pass_stmt":
            continue
        decorators, definition = _split_decorated(item)
        if definition.data != "funcdef":
            raise source.error_at(item, f"module {name} may only hold @T.prim_func functions")
        function_name = str(definition.children[0])
        if not decorators:
            raise source.error_at(definition, f"function {function_name} in module {name} needs @T.prim_func")
        _check_decorators(decorators, "prim_func", source)
        if function_name in functions:
            raise source.error_at(definition, f"module {name} defines {function_name} twice")
        functions[function_name] = _FunctionBuilder(source, extra_vars).build(definition)
    if not functions:
        raise source.error_at(classdef, f"module {name} has no @T.prim_func functions")
    return IRModule(functions, name=str(name))


def _parse_text(
    text: str, filename: str, line_offset: int, extra_vars: Mapping[str, Any]
) -> PrimFunc | IRModule:
    if not isinstance(text, str):
        raise TypeError(f"parse() takes the script as a str, got {type(text).__name__}")
    text = text.replace("\r\n", "\n")
    dedented = textwrap.dedent(text)
    source = SourceMap(tuple(dedented.split("\n")), filename, line_offset, _removed_indent(text, dedented))
    program = dedented.rstrip() + "\n"
    try:
        tree = _lark().parse(program)
    except (LarkError, IndentationProblem) as exc:
        raise from_lark(exc, source, program, _literals()) from None
    try:
        return _build(tree, source, extra_vars)
    except ParseError:
        raise
    except Exception as exc:
        message = f"internal error of the TVMScript parser ({type(exc).__name__}: {exc}); please report it"
        raise ParseError(message, filename=filename, lineno=line_offset + 1) from exc


def _removed_indent(text: str, dedented: str) -> int:
    def first_indent(lines: str) -> int:
        for line in lines.split("\n"):
            if line.strip():
                return len(line) - len(line.lstrip())
        return 0

    return first_indent(text) - first_indent(dedented)


def parse(
    text: str,
    *,
    filename: str = "<string>",
    line_offset: int = 0,
    extra_vars: Mapping[str, Any] | None = None,
) -> PrimFunc | IRModule:
    """Parse TVMScript text: one ``@T.prim_func def`` (or a bare ``def``) gives a PrimFunc,
    one ``@I.ir_module class`` an IRModule.

    ``line_offset`` is added to reported line numbers (the text's first line is
    line ``line_offset + 1`` of ``filename``). ``extra_vars`` supplies free names
    (constants such as ``N = 1024``); ``T`` and ``I`` are always known. Raises
    :class:`tir.ParseError` for any mistake in the text.
    """
    return _parse_text(text, filename, line_offset, extra_vars or {})


def parse_function(func: Callable) -> PrimFunc:
    """Parse a Python function's source (what ``@T.prim_func`` does) into a PrimFunc."""
    code = getattr(func, "__code__", None)
    try:
        lines, first_line = inspect.getsourcelines(func)
        filename = inspect.getsourcefile(func) or inspect.getfile(func)
    except (OSError, TypeError):
        raise ParseError(
            f"cannot read the source code of {getattr(func, '__qualname__', func)!r}: "
            "@T.prim_func parses the function's source text",
            filename=code.co_filename if code else "<unknown>",
            lineno=code.co_firstlineno if code else None,
            hint="when the code comes from python -c, exec() or a prompt without source, "
            "pass the script text to tir.parse(text) instead",
        ) from None
    closure = {}
    for name, cell in zip(code.co_freevars, func.__closure__ or ()):
        try:
            closure[name] = cell.cell_contents
        except ValueError:  # a cell not assigned yet
            continue
    result = _parse_text("".join(lines), filename, first_line - 1, ChainMap(closure, func.__globals__))
    if not isinstance(result, PrimFunc):
        raise ParseError(f"@T.prim_func decorates a function, not {type(result).__name__}", filename=filename)
    return result


def parse_module(cls: type) -> IRModule:
    """Collect a class's ``@T.prim_func`` methods (PrimFuncs already) into an IRModule."""
    if not isinstance(cls, type):
        raise TypeError(f"@I.ir_module decorates a class, not {type(cls).__name__}")
    functions: dict[str, PrimFunc] = {}
    for name, value in vars(cls).items():
        if isinstance(value, PrimFunc):
            functions[name] = value
        elif inspect.isfunction(value):
            raise ParseError(
                f"method {name} of module {cls.__name__} is not a @T.prim_func",
                filename=value.__code__.co_filename,
                lineno=value.__code__.co_firstlineno,
                hint="decorate it with @T.prim_func",
            )
    if not functions:
        raise ParseError(
            f"module {cls.__name__} has no @T.prim_func functions", hint="add one with @T.prim_func"
        )
    return IRModule(functions, name=cls.__name__)
