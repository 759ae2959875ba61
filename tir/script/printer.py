"""TVMScript printer: IR (PrimFunc, IRModule, Stmt, PrimExpr) to the text the parser reads back.

This is the last step of every IR's life that a user sees: ``func.script()``, ``show()``,
schedule errors and ``assert_structural_equal`` all go through ``to_script``. The output
follows TVM's conventions (docs/ARCHITECTURE.md, "Script syntax") and always parses back
(``tir.parse``) to a structurally equal function: names are made unique per function,
expressions get exactly the parentheses that keep their tree, constants print exactly.
``marks`` underline chosen nodes with carets and a message, for error reports.
"""

from __future__ import annotations

import json
import keyword
import math
import re
from typing import Any

from .. import dtype as _dt
from .. import op as _op
from ..buffer import Buffer, BufferRegion
from ..expr import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    Broadcast,
    BufferLoad,
    BufferPointer,
    Call,
    Cast,
    Div,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    IterKind,
    IterVar,
    Let,
    Max,
    Min,
    Mod,
    Mul,
    Not,
    Or,
    PrimExpr,
    Ramp,
    Range,
    Select,
    StringImm,
    Sub,
    Var,
)
from ..function import IRModule, PrimFunc
from ..functor import uses_var
from ..matrix_ops import TILE, tile_region
from ..stmt import (
    Allocate,
    Block,
    BlockRealize,
    BufferStore,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    LetStmt,
    SeqStmt,
    Stmt,
)

__all__ = ["to_script", "expr_to_str", "stmt_to_str"]

INDENT = "    "
# Signatures longer than this wrap, one continuation line per overflow, aligned after "(".
SIGNATURE_WIDTH = 110

# Python precedence levels, lowest first; an operand binding looser than its context gets parentheses.
_OR, _AND, _NOT, _CMP, _ADD, _MUL, _UNARY, _ATOM = 1, 2, 3, 4, 9, 10, 11, 13
_INFIX = {
    Add: ("+", _ADD),
    Sub: ("-", _ADD),
    Mul: ("*", _MUL),
    FloorDiv: ("//", _MUL),
    FloorMod: ("%", _MUL),
    EQ: ("==", _CMP),
    NE: ("!=", _CMP),
    LT: ("<", _CMP),
    LE: ("<=", _CMP),
    GT: (">", _CMP),
    GE: (">=", _CMP),
    And: ("and", _AND),
    Or: ("or", _OR),
}
_FUNCTION_OPS = {Min: "T.min", Max: "T.max", Mod: "T.truncmod"}
_AXIS_KIND = {
    IterKind.SPATIAL: "spatial",
    IterKind.REDUCE: "reduce",
    IterKind.OPAQUE: "opaque",
    IterKind.SCAN: "scan",
}
_LOOP_FUNCTION = {
    ForKind.SERIAL: "T.serial",
    ForKind.PARALLEL: "T.parallel",
    ForKind.VECTORIZED: "T.vectorized",
    ForKind.UNROLLED: "T.unroll",
    ForKind.THREAD_BINDING: "T.thread_binding",
}
# Names a script cannot rebind without breaking itself.
_RESERVED = frozenset(keyword.kwlist) | {"T", "I", "range"}
_NOT_IDENTIFIER = re.compile(r"\W")

# Marked text is wrapped in these until its line is emitted, where they become caret columns.
_MARK_OPEN, _MARK_SEP, _MARK_CLOSE = "\x01", "\x02", "\x03"


def to_script(obj: Any, marks: dict | None = None) -> str:
    """The TVMScript text of a PrimFunc, IRModule, Stmt, PrimExpr, Buffer or BufferRegion.

    ``marks`` maps nodes (statements, expressions, buffers) to messages: the first line
    printing a marked node is followed by a line of carets under the node and the message.
    Marked nodes that do not occur are ignored.
    """
    printer = _Printer(marks)
    if isinstance(obj, IRModule):
        printer.module(obj)
    elif isinstance(obj, PrimFunc):
        printer.standalone_func(obj)
    elif isinstance(obj, Stmt):
        printer.stmt(obj)
    elif isinstance(obj, PrimExpr):
        printer.emit(printer.expr(obj))
    elif isinstance(obj, Buffer):
        printer.emit(printer.buffer_param(obj))
    elif isinstance(obj, BufferRegion):
        printer.emit(printer.region(obj))
    else:
        raise TypeError(f"cannot print a {type(obj).__name__} as TVMScript")
    return printer.text()


def expr_to_str(expr: PrimExpr) -> str:
    """One expression as script text (free variables print by their names)."""
    return _Printer(None).expr(expr)


def stmt_to_str(stmt: Stmt) -> str:
    """One statement (and everything under it) as script text, unindented."""
    return to_script(stmt)


def _sanitize(name: str) -> str:
    name = _NOT_IDENTIFIER.sub("_", name) or "v"
    if name[0].isdigit():
        name = "v" + name
    return name


def _is_const(e: PrimExpr, value: int) -> bool:
    return isinstance(e, IntImm) and e.value == value


def _same_extent(a: PrimExpr, b: PrimExpr) -> bool:
    if a is b:
        return True
    return isinstance(a, IntImm) and isinstance(b, IntImm) and a.value == b.value and a.dtype == b.dtype


def _string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


class _Printer:
    """Prints into a list of lines; names are unique per function."""

    def __init__(self, marks: dict | None):
        self._lines: list[str] = []
        self._depth = 0
        self._pending_marks = dict(marks) if marks else {}
        self._messages: list[str] = []
        self._names: dict[object, str] = {}
        self._used: set[str] = set(_RESERVED)
        self._next_suffix: dict[str, int] = {}
        self._free_vars: list[tuple[Var, str]] = []
        self._loops: dict[Var, For] = {}
        self._expr_printers = {
            Var: self._var,
            IntImm: self._int,
            FloatImm: self._float,
            StringImm: self._str,
            Div: self._div,
            Not: self._not,
            Select: self._select,
            Cast: self._cast,
            BufferLoad: self._load,
            Ramp: self._ramp,
            Broadcast: self._broadcast,
            Call: self._call,
            BufferPointer: self._pointer,
            Let: self._let,
        }
        self._stmt_printers = {
            SeqStmt: self._seq,
            For: self._for,
            BlockRealize: self._block_realize,
            Block: self._bare_block,
            BufferStore: self._store,
            Evaluate: self._evaluate,
            IfThenElse: self._if,
            LetStmt: self._let_stmt,
            Allocate: self._allocate,
        }

    # ------------------------------------------------------------ output

    def text(self) -> str:
        return "\n".join(self._lines)

    def emit(self, text: str, node: object = None) -> None:
        """Add one line at the current depth; ``node`` marked means the whole line is."""
        if node is not None and node in self._pending_marks:
            text = self._mark(node, text)
        line = INDENT * self._depth + text
        if _MARK_OPEN in line:
            self._emit_marked(line)
        else:
            self._lines.append(line)

    def _mark(self, node: object, text: str) -> str:
        message = self._pending_marks.pop(node, None)
        if message is None:
            return text
        self._messages.append(str(message))
        return f"{_MARK_OPEN}{len(self._messages) - 1}{_MARK_SEP}{text}{_MARK_CLOSE}"

    def _emit_marked(self, line: str) -> None:
        plain: list[str] = []
        column = 0
        open_marks: list[tuple[int, int]] = []
        spans: list[tuple[int, int, int]] = []
        i = 0
        while i < len(line):
            char = line[i]
            if char == _MARK_OPEN:
                sep = line.index(_MARK_SEP, i)
                open_marks.append((int(line[i + 1 : sep]), column))
                i = sep + 1
                continue
            if char == _MARK_CLOSE:
                index, start = open_marks.pop()
                spans.append((start, column, index))
            else:
                plain.append(char)
                column += 1
            i += 1
        self._lines.append("".join(plain))
        for start, end, index in sorted(spans):
            message_lines = self._messages[index].splitlines() or [""]
            pad = " " * start
            self._lines.append(f"{pad}{'^' * max(1, end - start)} {message_lines[0]}".rstrip())
            self._lines.extend(f"{pad}{rest}" for rest in message_lines[1:])

    # ------------------------------------------------------------ names

    def _define(self, node: Var | Buffer) -> str:
        """Give a newly bound variable or buffer a name no other one in the function has."""
        base = _sanitize(node.name)
        name = base
        if name in self._used:
            suffix = self._next_suffix.get(base, 1)
            while f"{base}_{suffix}" in self._used:
                suffix += 1
            self._next_suffix[base] = suffix + 1
            name = f"{base}_{suffix}"
        self._used.add(name)
        self._names[node] = name
        return name

    def _reset_names(self) -> None:
        self._names.clear()
        self._used = set(_RESERVED)
        self._next_suffix.clear()
        self._free_vars = []

    def _var_name(self, var: Var) -> str:
        name = self._names.get(var)
        if name is None:
            name = self._define(var)
            self._free_vars.append((var, name))
        return name

    def _buffer_name(self, buffer: Buffer) -> str:
        name = self._names.get(buffer)
        return name if name is not None else self._define(buffer)

    # ------------------------------------------------------------ expressions

    def expr(self, e: PrimExpr) -> str:
        return self._format(e)[0]

    def _format(self, e: PrimExpr) -> tuple[str, int]:
        """Text and precedence level of an expression."""
        cls = type(e)
        infix = _INFIX.get(cls)
        if infix is not None:
            result = self._infix(e, *infix)
        elif cls in _FUNCTION_OPS:
            result = f"{_FUNCTION_OPS[cls]}({self.expr(e.a)}, {self.expr(e.b)})", _ATOM
        else:
            printer = self._expr_printers.get(cls)
            if printer is None:
                raise TypeError(f"the script printer does not know the expression node {cls.__name__}")
            result = printer(e)
        if self._pending_marks and e in self._pending_marks:
            return self._mark(e, result[0]), result[1]
        return result

    def _operand(self, e: PrimExpr, min_level: int) -> str:
        text, level = self._format(e)
        return f"({text})" if level < min_level else text

    def _infix(self, e, op: str, level: int) -> tuple[str, int]:
        if _is_float_floor(e):
            return f"T.{type(e).__name__.lower()}({self.expr(e.a)}, {self.expr(e.b)})", _ATOM
        # Comparisons chain in Python, so neither side may be a bare comparison.
        left_min = level + 1 if level == _CMP else level
        return f"{self._operand(e.a, left_min)} {op} {self._operand(e.b, level + 1)}", level

    def _var(self, v: Var) -> tuple[str, int]:
        return self._var_name(v), _ATOM

    def _int(self, e: IntImm) -> tuple[str, int]:
        if e.dtype == "int32":
            return str(e.value), (_ATOM if e.value >= 0 else _UNARY)
        if e.dtype == "bool":
            return ("True" if e.value else "False"), _ATOM
        return f"T.{e.dtype}({e.value})", _ATOM

    def _float(self, e: FloatImm) -> tuple[str, int]:
        value = e.value
        text = repr(float(value)) if math.isfinite(value) else _string(repr(float(value)))
        return f"T.{e.dtype}({text})", _ATOM

    def _str(self, e: StringImm) -> tuple[str, int]:
        return _string(e.value), _ATOM

    def _div(self, e: Div) -> tuple[str, int]:
        if _dt.is_float(e.dtype):
            return self._infix(e, "/", _MUL)
        return f"T.truncdiv({self.expr(e.a)}, {self.expr(e.b)})", _ATOM

    def _not(self, e: Not) -> tuple[str, int]:
        return f"not {self._operand(e.a, _NOT)}", _NOT

    def _select(self, e: Select) -> tuple[str, int]:
        args = f"{self.expr(e.condition)}, {self.expr(e.true_value)}, {self.expr(e.false_value)}"
        return f"T.Select({args})", _ATOM

    def _cast(self, e: Cast) -> tuple[str, int]:
        return f"T.Cast({_string(e.dtype)}, {self.expr(e.value)})", _ATOM

    def _load(self, e: BufferLoad) -> tuple[str, int]:
        return f"{self._buffer_name(e.buffer)}[{self._indices(e.indices)}]", _ATOM

    def _indices(self, indices) -> str:
        return ", ".join(self.expr(i) for i in indices) if indices else "()"

    def _ramp(self, e: Ramp) -> tuple[str, int]:
        return f"T.Ramp({self.expr(e.base)}, {self.expr(e.stride)}, {e.lanes})", _ATOM

    def _broadcast(self, e: Broadcast) -> tuple[str, int]:
        return f"T.Broadcast({self.expr(e.value)}, {e.lanes})", _ATOM

    def _call(self, e: Call) -> tuple[str, int]:
        if e.op == TILE:
            return self.region(tile_region(e)), _ATOM
        args = [self.expr(a) for a in e.args]
        if e.op in ("call_extern", "reinterpret"):
            args.insert(0, _string(e.dtype))
        elif e.op in _op.OPAQUE_CALLS and e.op != "call_packed" and e.dtype != "handle":
            args.append(f"dtype={_string(e.dtype)}")
        return f"T.{e.op}({', '.join(args)})", _ATOM

    def _pointer(self, e: BufferPointer) -> tuple[str, int]:
        name = self._buffer_name(e.buffer)
        if not e.access and _is_const(e.offset, 0) and e.extent is None:
            return f"{name}.data", _ATOM
        offset = "" if _is_const(e.offset, 0) else f", offset={self.expr(e.offset)}"
        extent = "" if e.extent is None else f", extent={self.expr(e.extent)}"
        return f"{name}.access_ptr({_string(e.access)}{offset}{extent})", _ATOM

    def _let(self, e: Let) -> tuple[str, int]:
        value = self.expr(e.value)
        name = self._define(e.var)
        return f"T.Let({self.expr(e.body)}, where={{{name}: {value}}})", _ATOM

    def _literal(self, value: Any) -> str:
        """A Python value of an attribute or annotation dict."""
        if isinstance(value, (bool, int, float)) or value is None:
            return repr(value)
        if isinstance(value, str):
            return _string(value)
        if isinstance(value, PrimExpr):
            return self.expr(value)
        if isinstance(value, Buffer):
            return self._buffer_name(value)
        if isinstance(value, dict):
            items = ", ".join(f"{self._literal(k)}: {self._literal(v)}" for k, v in value.items())
            return "{" + items + "}"
        if isinstance(value, list):
            return "[" + ", ".join(self._literal(v) for v in value) + "]"
        if isinstance(value, tuple):
            return self._tuple([self._literal(v) for v in value])
        return repr(value)

    @staticmethod
    def _tuple(items: list[str]) -> str:
        return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"

    # ------------------------------------------------------------ buffers

    def _shape(self, buffer: Buffer) -> str:
        return self._tuple([self.expr(s) for s in buffer.shape])

    def buffer_param(self, buffer: Buffer) -> str:
        name = self._buffer_name(buffer)
        args = [self._shape(buffer), _string(buffer.dtype)]
        if buffer.scope != "global":
            args.append(f"scope={_string(buffer.scope)}")
        text = f"{name}: T.Buffer({', '.join(args + self._layout_args(buffer, name))})"
        return self._mark(buffer, text) if buffer in self._pending_marks else text

    def _alloc_buffer(self, buffer: Buffer) -> None:
        name = self._define(buffer)
        args = [self._shape(buffer)]
        if buffer.dtype != "float32":
            args.append(_string(buffer.dtype))
        if buffer.scope != "global":
            args.append(f"scope={_string(buffer.scope)}")
        self.emit(f"{name} = T.alloc_buffer({', '.join(args + self._layout_args(buffer, name))})", buffer)

    def _layout_args(self, buffer: Buffer, name: str) -> list[str]:
        """TVM's layout keywords that differ from the defaults. An offset variable first seen here
        with ``offset_factor`` is the one the parser makes for it: scripts call it ``A.elem_offset``."""
        args = []
        if buffer.strides:
            args.append(f"strides={self._tuple([self.expr(s) for s in buffer.strides])}")
        offset = buffer.elem_offset
        if isinstance(offset, Var) and buffer.offset_factor and offset not in self._names:
            self._names[offset] = f"{name}.elem_offset"
        elif offset is not None:
            args.append(f"elem_offset={self.expr(offset)}")
        if buffer.align:
            args.append(f"align={buffer.align}")
        if buffer.offset_factor:
            args.append(f"offset_factor={buffer.offset_factor}")
        if buffer.axis_separators:
            args.append(f"axis_separators=[{', '.join(str(s) for s in buffer.axis_separators)}]")
        return args

    def region(self, region: BufferRegion) -> str:
        dims = []
        for r in region.region:
            if _is_const(r.extent, 1):
                dims.append(self.expr(r.min))
            else:
                dims.append(f"{self.expr(r.min)}:{self.expr(r.min + r.extent)}")
        return f"{self._buffer_name(region.buffer)}[{', '.join(dims) if dims else '()'}]"

    # ------------------------------------------------------------ functions

    def module(self, mod: IRModule) -> None:
        self._lines += ["# from tir import T, I", "", "@I.ir_module", f"class {_sanitize(mod.name)}:"]
        self._depth = 1
        for index, (name, func) in enumerate(mod.functions.items()):
            if index:
                self._lines.append("")
            self._func(func, name)
        self._depth = 0

    def standalone_func(self, func: PrimFunc) -> None:
        self._lines += ["# from tir import T", ""]
        self._func(func, func.name)

    def _func(self, func: PrimFunc, name: str) -> None:
        self._reset_names()
        for param in func.params:
            self._define(param)
        self.emit("@T.prim_func")
        self._signature(func, name)
        self._depth += 1
        body_start = len(self._lines)
        if func.attrs:
            self.emit(f"T.func_attr({self._literal(func.attrs)})")
        self._func_body(func.body)
        declarations = [f"{INDENT * self._depth}{name} = T.{v.dtype}()" for v, name in self._free_vars]
        self._lines[body_start:body_start] = declarations
        self._depth -= 1

    def _signature(self, func: PrimFunc, name: str) -> None:
        params = [
            self.buffer_param(p) if isinstance(p, Buffer) else f"{self._names[p]}: T.{p.dtype}"
            for p in func.params
        ]
        head = f"def {_sanitize(name)}("
        indent = INDENT * self._depth
        one_line = f"{head}{', '.join(params)}):"
        if len(indent) + len(one_line) <= SIGNATURE_WIDTH or len(params) < 2:
            self.emit(one_line)
            return
        align = " " * len(head)
        current = head + params[0]
        for param in params[1:]:
            if len(indent) + len(current) + len(param) + 3 > SIGNATURE_WIDTH:
                self.emit(current + ",")
                current = align + param
            else:
                current += ", " + param
        self.emit(current + "):")

    def _func_body(self, body: Stmt) -> None:
        if isinstance(body, BlockRealize) and _is_implicit_root(body):
            self.emit('# with T.block("root"):', body if body in self._pending_marks else body.block)
            for buffer in body.block.alloc_buffers:
                self._alloc_buffer(buffer)
            self.stmt(body.block.body)
        else:
            self.stmt(body)

    # ------------------------------------------------------------ statements

    def stmt(self, s: Stmt, last: bool = True) -> None:
        """Print a statement; ``last``: nothing follows it in its indented block."""
        printer = self._stmt_printers.get(type(s))
        if printer is None:
            raise TypeError(f"the script printer does not know the statement node {type(s).__name__}")
        printer(s, last)

    def _body(self, s: Stmt) -> None:
        self._depth += 1
        self.stmt(s)
        self._depth -= 1

    def _seq(self, s: SeqStmt, last: bool) -> None:
        if not s.seq:
            self.emit("T.evaluate(0)", s)
            return
        if s in self._pending_marks:
            self._mark_first_line(s, s.seq[0])
        final = len(s.seq) - 1
        for index, child in enumerate(s.seq):
            self.stmt(child, last and index == final)

    def _mark_first_line(self, outer: Stmt, inner: Stmt) -> None:
        """A sequence has no line of its own: its mark goes to its first statement's line."""
        if inner not in self._pending_marks:
            self._pending_marks[inner] = self._pending_marks.pop(outer)

    def _store(self, s: BufferStore, last: bool) -> None:
        target = f"{self._buffer_name(s.buffer)}[{self._indices(s.indices)}]"
        self.emit(f"{target} = {self.expr(s.value)}", s)

    def _evaluate(self, s: Evaluate, last: bool) -> None:
        self.emit(f"T.evaluate({self.expr(s.value)})", s)

    def _if(self, s: IfThenElse, last: bool) -> None:
        self.emit(f"if {self.expr(s.condition)}:", s)
        self._body(s.then_case)
        if s.else_case is not None:
            self.emit("else:")
            self._body(s.else_case)

    def _let_stmt(self, s: LetStmt, last: bool) -> None:
        value = self.expr(s.value)
        name = self._define(s.var)
        if last:
            self.emit(f"{name}: T.{s.var.dtype} = {value}", s)
            self.stmt(s.body)
        else:
            # Statements follow in this block, so the concise form would swallow them into the body.
            self.emit(f"with T.LetStmt({value}) as {name}:", s)
            self._body(s.body)

    def _allocate(self, s: Allocate, last: bool) -> None:
        buffer = s.buffer
        name = self._define(buffer)
        args = [self._shape(buffer), _string(buffer.dtype)]
        if buffer.scope != "global":
            args.append(f"scope={_string(buffer.scope)}")
        call = f"T.decl_buffer({', '.join(args + self._layout_args(buffer, name))})"
        mark_node = s if s in self._pending_marks else buffer
        if last:
            self.emit(f"{name} = {call}", mark_node)
            self.stmt(s.body)
        else:
            self.emit(f"with {call} as {name}:", mark_node)
            self._body(s.body)

    # ------------------------------------------------------------ loops

    def _for(self, loop: For, last: bool) -> None:
        loops = self._grid(loop)
        for each in loops:
            self._loops[each.loop_var] = each
        names = ", ".join(self._define(each.loop_var) for each in loops)
        if len(loops) > 1:
            source = f"T.grid({', '.join(self.expr(each.extent) for each in loops)})"
        else:
            source = self._loop_source(loop)
        self.emit(f"for {names} in {source}:", loop)
        self._body(loops[-1].body)
        for each in loops:
            del self._loops[each.loop_var]

    def _grid(self, loop: For) -> list[For]:
        """The perfectly nested plain loops from ``loop`` down that print as one ``T.grid``."""
        loops = [loop]
        if not _is_plain_loop(loop) or loop in self._pending_marks:
            return loops  # a marked loop gets a line of its own, so the carets point at it alone
        inner = loop.body
        while isinstance(inner, For) and _is_plain_loop(inner) and inner not in self._pending_marks:
            outer_vars = {each.loop_var for each in loops}
            if not isinstance(inner.extent, IntImm) and uses_var(inner.extent, outer_vars.__contains__):
                break
            loops.append(inner)
            inner = inner.body
        return loops

    def _loop_source(self, loop: For) -> str:
        if _is_const(loop.min, 0) and loop.min.dtype == loop.extent.dtype:
            bounds = self.expr(loop.extent)
        else:
            bounds = f"{self.expr(loop.min)}, {self.expr(loop.min + loop.extent)}"
        if loop.kind is ForKind.SERIAL and not loop.annotations:
            return f"range({bounds})"
        args = [bounds]
        if loop.kind is ForKind.THREAD_BINDING and loop.thread_tag is not None:
            args.append(f"thread={_string(loop.thread_tag)}")
        if loop.annotations:
            args.append(f"annotations={self._literal(loop.annotations)}")
        return f"{_LOOP_FUNCTION[loop.kind]}({', '.join(args)})"

    # ------------------------------------------------------------ blocks

    def _block_realize(self, realize: BlockRealize, last: bool) -> None:
        block = realize.block
        mark_node = realize if realize in self._pending_marks else block
        self.emit(f"with T.block({_string(block.name)}):", mark_node)
        self._depth += 1
        self._iter_bindings(block, realize.iter_values)
        if not _is_const(realize.predicate, 1):
            self.emit(f"T.where({self.expr(realize.predicate)})")
        self._block_contents(block)
        self._depth -= 1

    def _bare_block(self, block: Block, last: bool) -> None:
        """A Block outside its BlockRealize (printed alone): iterators show their domains only."""
        self.emit(f"with T.block({_string(block.name)}):", block)
        self._depth += 1
        for iv in block.iter_vars:
            self.emit(f"{self._define(iv.var)} = T.axis.{_AXIS_KIND[iv.kind]}({self._domain(iv.dom)})")
        self._block_contents(block)
        self._depth -= 1

    def _iter_bindings(self, block: Block, values: tuple[PrimExpr, ...]) -> None:
        run: list[tuple[IterVar, Var]] = []
        for iv, value in zip(block.iter_vars, values):
            if self._is_remap(iv, value):
                run.append((iv, value))
                continue
            self._emit_remap(run)
            run = []
            self._emit_axis(iv, value)
        self._emit_remap(run)

    def _emit_axis(self, iv: IterVar, value: PrimExpr) -> None:
        value_text = self.expr(value)
        name = self._define(iv.var)
        self.emit(f"{name} = T.axis.{_AXIS_KIND[iv.kind]}({self._domain(iv.dom)}, {value_text})")

    def _emit_remap(self, run: list[tuple[IterVar, Var]]) -> None:
        """Consecutive iterators bound to whole loops: ``vi, vk = T.axis.remap("SR", [i, k])``.

        A lone one prints as ``vi = T.axis.spatial(1024, i)``, as TVM does.
        """
        if len(run) == 1:
            self._emit_axis(*run[0])
            return
        if not run:
            return
        loop_vars = ", ".join(self.expr(value) for _, value in run)
        names = ", ".join(self._define(iv.var) for iv, _ in run)
        kinds = "".join(iv.kind.value for iv, _ in run)
        self.emit(f"{names} = T.axis.remap({_string(kinds)}, [{loop_vars}])")

    def _is_remap(self, iv: IterVar, value: PrimExpr) -> bool:
        if (
            iv.kind in (IterKind.OPAQUE, IterKind.SCAN)
            or not isinstance(value, Var)
            or value.dtype != iv.var.dtype
        ):
            return False
        loop = self._loops.get(value)
        return (
            loop is not None
            and _is_const(loop.min, 0)
            and _is_const(iv.dom.min, 0)
            and _same_extent(iv.dom.extent, loop.extent)
        )

    def _domain(self, dom: Range) -> str:
        if _is_const(dom.min, 0) and dom.min.dtype == dom.extent.dtype:
            return self.expr(dom.extent)
        return f"({self.expr(dom.min)}, {self.expr(dom.min + dom.extent)})"

    def _block_contents(self, block: Block) -> None:
        self.emit(f"T.reads({', '.join(self.region(r) for r in block.reads)})")
        self.emit(f"T.writes({', '.join(self.region(r) for r in block.writes)})")
        if block.annotations:
            self.emit(f"T.block_attr({self._literal(block.annotations)})")
        for buffer in block.alloc_buffers:
            self._alloc_buffer(buffer)
        if block.init is not None:
            self.emit("with T.init():")
            self._body(block.init)
        self.stmt(block.body)


def _is_float_floor(e: PrimExpr) -> bool:
    """Float floor division has no Python operator that parses back to the same node."""
    return type(e) in (FloorDiv, FloorMod) and _dt.is_float(e.dtype)


def _is_plain_loop(loop: For) -> bool:
    return (
        loop.kind is ForKind.SERIAL
        and not loop.annotations
        and _is_const(loop.min, 0)
        and loop.min.dtype == loop.extent.dtype
    )


def _is_implicit_root(realize: BlockRealize) -> bool:
    """The root block TVM hides: nothing on it but allocations."""
    block = realize.block
    return (
        block.name == "root"
        and not block.iter_vars
        and not realize.iter_values
        and _is_const(realize.predicate, 1)
        and not block.annotations
        and block.init is None
        and not block.reads
        and not block.writes
    )
