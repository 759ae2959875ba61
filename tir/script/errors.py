"""ParseError, the one exception the TVMScript front end raises for bad input, and its sources.

The parser (tir/script/parser.py) reports every problem as a ParseError that
names the user's file, line and column, shows the source line with a caret under
the offending span and, where it helps, a hint line saying what was expected.
``SourceMap`` turns positions in the parsed text into positions in the user's
file (a decorated function is parsed from its dedented source, so both a line
and a column offset apply). ``from_lark`` converts lark's exceptions (and the
indentation problems our postlex finds) so that none of them reaches the user.
ParseError subclasses SyntaxError, so Python prints it like a syntax error.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass

from lark import Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken


class ParseError(SyntaxError):
    """A mistake in a TVMScript program, located in the user's source.

    ``lineno`` and ``offset`` are 1-based (as in SyntaxError); ``end_offset`` is
    the column just past the offending span on that line; ``text`` is the source
    line; ``hint`` an optional line of advice.
    """

    def __init__(
        self,
        msg: str,
        *,
        filename: str = "<string>",
        lineno: int | None = None,
        offset: int | None = None,
        text: str | None = None,
        end_offset: int | None = None,
        hint: str | None = None,
    ):
        super().__init__(msg, (filename, lineno, offset, text, lineno, end_offset))
        self.hint = hint
        if hint and hasattr(self, "add_note"):  # Python 3.11+: tracebacks show notes, not __str__
            self.add_note(f"hint: {hint}")

    def __reduce__(self):
        # The default would call __init__ with SyntaxError's positional args; keep our fields instead.
        fields = {"filename": self.filename, "lineno": self.lineno, "offset": self.offset, "text": self.text}
        rebuild = functools.partial(ParseError, end_offset=self.end_offset, hint=self.hint, **fields)
        return rebuild, (self.msg,)

    def __str__(self) -> str:
        where = self.filename or "<string>"
        if self.lineno is not None:
            where += f":{self.lineno}"
            if self.offset is not None:
                where += f":{self.offset}"
        lines = [f"{where}: error: {self.msg}", *self._source_with_caret()]
        if self.hint:
            lines.append(f"hint: {self.hint}")
        return "\n".join(lines)

    def _source_with_caret(self) -> list[str]:
        if not self.text or not self.text.strip():
            return []
        line = self.text.rstrip("\r\n")
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        gutter = "    "
        if self.offset is None:
            return [gutter + stripped]
        start = max(self.offset - 1 - indent, 0)
        end = self.end_offset - 1 - indent if self.end_offset else start + 1
        width = max(1, min(end, len(stripped)) - start)
        return [gutter + stripped, gutter + " " * start + "^" * width]


class IndentationProblem(Exception):
    """Raised by the parser's indentation postlex; converted by ``from_lark``."""

    def __init__(self, msg: str, line: int, column: int, hint: str | None = None):
        super().__init__(msg)
        self.msg, self.line, self.column, self.hint = msg, line, column, hint


@dataclass(frozen=True)
class SourceMap:
    """The parsed text's lines and where they sit in the user's file."""

    lines: tuple[str, ...]
    filename: str = "<string>"
    line_offset: int = 0
    col_offset: int = 0

    def error(
        self,
        msg: str,
        line: int,
        column: int,
        end_line: int | None = None,
        end_column: int | None = None,
        hint: str | None = None,
    ) -> ParseError:
        """A ParseError at 1-based ``line``/``column`` of the parsed text."""
        text = self.lines[line - 1] if 1 <= line <= len(self.lines) else None
        if end_line not in (None, line):
            end_column = len(text) + 1 if text is not None else None
        pad = " " * self.col_offset
        return ParseError(
            msg,
            filename=self.filename,
            lineno=line + self.line_offset,
            offset=column + self.col_offset,
            text=None if text is None else pad + text,
            end_offset=None if end_column is None else end_column + self.col_offset,
            hint=hint,
        )

    def error_at(self, node: Tree | Token | None, msg: str, hint: str | None = None) -> ParseError:
        """A ParseError spanning a lark tree or token (the first line when it has no position)."""
        span = span_of(node)
        if span is None:
            return self.error(msg, 1, 1, hint=hint)
        return self.error(msg, *span, hint=hint)

    def where(self, line: int, column: int) -> str:
        """``line L, column C`` of a parsed-text position, in the user's file."""
        return f"line {line + self.line_offset}, column {column + self.col_offset}"


def span_of(node: Tree | Token | None) -> tuple[int, int, int, int] | None:
    """(line, column, end_line, end_column) of a lark node, or None when it has none."""
    if isinstance(node, Token):
        if node.line is None:
            return None
        return node.line, node.column, node.end_line, node.end_column
    if isinstance(node, Tree) and not node.meta.empty:
        meta = node.meta
        return meta.line, meta.column, meta.end_line, meta.end_column
    return None


# ---------------------------------------------------------------- lark's exceptions

_TERMINAL_WORDS = {
    "NAME": "a name",
    "DEC_NUMBER": "a number",
    "HEX_NUMBER": "a number",
    "FLOAT_NUMBER": "a number",
    "STRING": "a string",
    "LONG_STRING": "a string",
    "_NEWLINE": "a new line",
    "_INDENT": "an indented block",
    "_DEDENT": "the end of the block",
    "$END": "the end of the input",
    "AUGOP": "an augmented assignment such as +=",
}
# Tokens that continue an expression: listed only when nothing else would do.
_CONTINUATIONS = frozenset(
    ("+", "-", "*", "/", "//", "%", "**", "@", "|", "&", "<", ">", "==", ">=", "<=", "!=")
    + ("in", "not", "is", "if", "and", "or", ".", "(", "[", "=", "AUGOP")
)
_EXPRESSION_STARTS = frozenset(
    ("NAME", "DEC_NUMBER", "HEX_NUMBER", "FLOAT_NUMBER", "STRING", "LONG_STRING", "(", "[", "{")
    + ("-", "+", "~", "not", "lambda", "None", "True", "False", "...")
)
# Keywords that only begin statements: seen inside brackets, the bracket was left open.
_STATEMENT_KEYWORDS = frozenset(
    ("for", "with", "def", "class", "while", "return", "pass", "import", "from", "try", "elif")
    + ("else", "del", "global", "raise", "assert")
)


def from_lark(exc: Exception, source: SourceMap, text: str, literals: Mapping[str, str]) -> ParseError:
    """Convert a lark exception (or an IndentationProblem) raised on ``text`` to a ParseError.

    ``literals`` maps terminal names to the literal text they match ("COLON" -> ":").
    """
    if isinstance(exc, IndentationProblem):
        return source.error(exc.msg, exc.line, exc.column, hint=exc.hint)
    if isinstance(exc, UnexpectedCharacters):
        char = text[exc.pos_in_stream] if exc.pos_in_stream < len(text) else ""
        message = "unterminated string literal" if char in ("'", '"') else f"invalid character {char!r}"
        return source.error(message, exc.line, exc.column)
    if isinstance(exc, UnexpectedEOF) or isinstance(exc, UnexpectedToken) and _at_end(exc.token, text):
        return _unexpected_end(source, text)
    if isinstance(exc, UnexpectedToken):
        return _unexpected_token(exc, source, text, literals)
    if isinstance(exc, UnexpectedInput):
        return source.error(f"invalid syntax ({exc.__class__.__name__})", exc.line, exc.column)
    return source.error(f"invalid syntax: {exc}", 1, 1)


def _at_end(token: Token, text: str) -> bool:
    # The dedents that close the file arrive early when a bracket is still open.
    if token.type == "_DEDENT":
        return _unclosed_bracket(text, len(text)) is not None
    return token.type == "$END"


def _unexpected_token(exc: UnexpectedToken, source: SourceMap, text: str, literals: Mapping[str, str]):
    token = exc.token
    expected = set(exc.accepts or exc.expected)
    line, column = token.line, token.column
    if token.type in ("_INDENT", "_DEDENT"):
        line, column = token.end_line, token.end_column
    if token.type == "_INDENT":
        return source.error(
            "unexpected indent", line, column, hint="this line is indented more than the one before"
        )
    if "_INDENT" in expected:
        return source.error(
            "expected an indented block", line, column, hint="indent the body of the statement"
        )
    hint = _expected_words(expected, literals)
    bracket = _unclosed_bracket(text, token.start_pos)
    if bracket is not None and token.value == "for" and text.count("\n", bracket, token.start_pos) == 0:
        return source.error("comprehensions are not supported in TVMScript", line, column, hint="use a loop")
    if bracket is not None and (token.value in _STATEMENT_KEYWORDS or token.type == "_DEDENT"):
        hint = _unclosed_bracket_hint(source, text, bracket)
    end_column = token.end_column if token.type not in ("_NEWLINE", "_DEDENT") else None
    return source.error(
        f"invalid syntax: unexpected {_describe_token(token)}", line, column, line, end_column, hint
    )


def _unexpected_end(source: SourceMap, text: str) -> ParseError:
    body = text.rstrip()
    line = body.count("\n") + 1
    column = len(body) - (body.rfind("\n") + 1) + 1
    bracket = _unclosed_bracket(text, len(text))
    hint = "the last statement is incomplete"
    if bracket is not None:
        hint = _unclosed_bracket_hint(source, text, bracket)
    return source.error("unexpected end of input", line, column, hint=hint)


def _describe_token(token: Token) -> str:
    kind = token.type
    if kind == "_NEWLINE":
        return "end of line"
    if kind == "_DEDENT":
        return "dedent"
    if kind == "NAME":
        return f"name {token.value!r}"
    if kind.endswith("NUMBER"):
        return f"number {token.value}"
    if kind.endswith("STRING"):
        value = token.value if len(token.value) <= 20 else token.value[:17] + "..."
        return f"string {value}"
    return f"'{token.value}'"


def _expected_words(expected: set[str], literals: Mapping[str, str]) -> str | None:
    def text_of(name: str) -> str:
        return literals.get(name, name)

    useful = {name for name in expected if text_of(name) not in _CONTINUATIONS}
    if not useful:
        return "expected an operator or the end of the expression" if expected else None
    if len({name for name in useful if text_of(name) in _STATEMENT_KEYWORDS}) >= 3:
        return "expected a statement"
    starts = {name for name in useful if text_of(name) in _EXPRESSION_STARTS}
    words = {_TERMINAL_WORDS.get(name) or f"'{text_of(name)}'" for name in useful - starts}
    if len(starts) >= 3:
        words.add("an expression")
    else:
        words |= {_TERMINAL_WORDS.get(name) or f"'{text_of(name)}'" for name in starts}
    ordered = sorted(words)
    return "expected " + (ordered[0] if len(ordered) == 1 else "one of " + ", ".join(ordered))


def _unclosed_bracket_hint(source: SourceMap, text: str, position: int) -> str:
    line = text.count("\n", 0, position) + 1
    column = position - (text.rfind("\n", 0, position) + 1) + 1
    return f"'{text[position]}' opened at {source.where(line, column)} is never closed"


def _unclosed_bracket(text: str, end: int) -> int | None:
    """Offset of the innermost bracket still open at ``end`` (strings and comments skipped)."""
    pairs = {")": "(", "]": "[", "}": "{"}
    stack: list[int] = []
    i = 0
    while i < end:
        char = text[i]
        if char == "#":
            newline = text.find("\n", i)
            i = end if newline < 0 else newline
            continue
        if char in ("'", '"'):
            i = _string_end(text, i)
            continue
        if char in "([{":
            stack.append(i)
        elif char in pairs and stack and text[stack[-1]] == pairs[char]:
            stack.pop()
        i += 1
    return stack[-1] if stack else None


def _string_end(text: str, start: int) -> int:
    quote = text[start] * 3 if text.startswith(text[start] * 3, start) else text[start]
    i = start + len(quote)
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text.startswith(quote, i):
            return i + len(quote)
        if text[i] == "\n" and len(quote) == 1:
            return i
        i += 1
    return len(text)
