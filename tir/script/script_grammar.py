"""Lexing and the lark parser of TVMScript: the first step of parsing.

``_lark()`` builds (once, cached) the LALR parser of grammar.lark with ``_Indentation``,
a postlex that turns newlines into _INDENT/_DEDENT tokens the way Python does and reports
mixed tabs and spaces or a stray unindent as an IndentationProblem. ``_literals()`` maps
terminal names to their spelling so that tir/script/errors.py can word lark's complaints.
parser.py feeds the dedented text to ``_lark().parse`` and hands the tree to the builder
(script_builder.py).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path

from lark import Lark, Token
from lark.lark import PostLex

from .errors import IndentationProblem


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
