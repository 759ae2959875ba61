"""TVMScript text to IR: ``parse(text)`` gives a PrimFunc or an IRModule.

Flow: the text is dedented, tokenized and parsed by lark (LALR, grammar.lark)
with an indentation postlex (script_grammar.py); this file checks the file's
shape (one ``@T.prim_func`` def or one ``@I.ir_module`` class) and hands each
function to ``_FunctionBuilder`` (script_builder.py), which walks lark's tree
with scopes for loop variables, block iterators, let variables and buffers
(script_scope.py), evaluates expressions (script_exprs.py) and builds nodes
through tir.op (which folds constants and promotes dtypes). Script calls
(``T.axis.remap``, ``T.alloc_buffer``, ...) are handlers (script_calls.py,
script_expr_calls.py) that evaluate their argument trees into values or markers
(script_values.py: a loop to open, a buffer to declare, a directive for the
enclosing block, script_blocks.py); statements consume them. Free names come
from ``extra_vars`` (a decorated function's globals and closure) and must be
plain constants: no user code ever runs. Every problem leaves as a ParseError
located in the user's file (tir/script/errors.py). ``T.prim_func`` and
``I.ir_module`` (namespace.py) call ``parse_function`` and ``parse_module``.
"""

from __future__ import annotations

import inspect
import textwrap
from collections import ChainMap
from collections.abc import Callable, Mapping
from typing import Any

from lark import Tree
from lark.exceptions import LarkError

from ..function import IRModule, PrimFunc
from .errors import IndentationProblem, ParseError, SourceMap, from_lark
from .script_builder import _FunctionBuilder
from .script_calls import _HANDLERS  # noqa: F401  (re-exported: tests check the handler table)
from .script_grammar import _lark, _literals

__all__ = ["parse", "parse_function", "parse_module"]


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
