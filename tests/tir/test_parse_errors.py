"""Tests of the parser's errors: each mistake gives a ParseError at the right line with a clear message.

Every case is a small script, the line the error must point at (line 1 is the
``@T.prim_func`` line) and a phrase of the message. Further tests check the rendering
(file:line:col, the source line, the caret, the hint), line numbers of decorated
functions in real files, and that no lark exception ever escapes, whatever the input.
"""

from __future__ import annotations

import importlib.util
import pickle
import random
import sys
import textwrap

import pytest

import tir
from tir import T
from tir.script.errors import ParseError

HEADER = """\
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32"), C: T.Buffer((16,), "int32")):
"""


def _script(body: str) -> str:
    return HEADER + textwrap.indent(textwrap.dedent(body), "    ")


# (id, body under HEADER, line of the error, phrase of the message)
MISTAKES = [
    (
        "unknown_T_function",
        """
        for i in T.serail(16):
            C[i] = 1
        """,
        4,
        "did you mean T.serial",
    ),
    (
        "remap_with_one_argument",
        """
        for i in range(16):
            with T.block("B"):
                vi = T.axis.remap("S")
                B[vi] = 1.0
        """,
        6,
        "missing a required argument: 'bindings'",
    ),
    (
        "buffer_indexed_with_wrong_rank",
        """
        for i, j in T.grid(16, 16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi] = A[vi, vj, 0] * 2.0
        """,
        7,
        "buffer A has 2 dimensions but is indexed with 3 indices",
    ),
    (
        "undefined_variable",
        """
        for i in range(16):
            C[i] = k + 1
        """,
        5,
        "name 'k' is not defined",
    ),
    (
        "axis_kind_with_a_bad_letter",
        """
        for i, j in T.grid(16, 16):
            with T.block("B"):
                vi, vj = T.axis.remap("SX", [i, j])
        """,
        6,
        "unknown iterator kind 'X'",
    ),
    (
        "remap_length_mismatch",
        """
        for i, j in T.grid(16, 16):
            with T.block("B"):
                vi, vj = T.axis.remap("SSR", [i, j])
        """,
        6,
        "3 kinds ('SSR') but 2 loop variables",
    ),
    (
        "remap_of_an_expression",
        """
        for i in range(16):
            with T.block("B"):
                vi = T.axis.remap("S", [i + 1])
        """,
        6,
        "binds iterators to loop variables",
    ),
    (
        "float_stored_into_int_buffer",
        """
        for i in range(16):
            with T.block("C"):
                vi = T.axis.spatial(16, i)
                C[vi] = B[vi] * 2.0
        """,
        7,
        "buffer C holds int32 but the value is float32",
    ),
    (
        "float_constant_into_int_buffer",
        """
        C[0] = 0.5
        """,
        4,
        "the float 0.5",
    ),
    (
        "while_loop",
        """
        while True:
            C[0] = 1
        """,
        4,
        "while loops are not supported",
    ),
    (
        "try_statement",
        """
        try:
            C[0] = 1
        except ValueError:
            pass
        """,
        4,
        "try/except is not supported",
    ),
    (
        "lambda",
        """
        f = lambda x: x + 1
        """,
        4,
        "lambda is not supported",
    ),
    (
        "nested_def",
        """
        def helper(x):
            pass
        """,
        4,
        "cannot be defined inside a prim_func",
    ),
    (
        "inconsistent_dedent",
        """
        for i in range(16):
            C[i] = 1
          C[0] = 2
        """,
        6,
        "unindent does not match",
    ),
    (
        "tab_after_spaces",
        """
        for i in range(16):
        \tC[i] = 1
        """,
        5,
        "inconsistent use of tabs and spaces",
    ),
    (
        "axis_outside_a_block",
        """
        for i in range(16):
            vi = T.axis.spatial(16, i)
        """,
        5,
        "only valid directly inside a with T.block",
    ),
    (
        "init_outside_a_block",
        """
        for i in range(16):
            with T.init():
                C[i] = 0
        """,
        5,
        "T.init(...) is only valid directly inside",
    ),
    (
        "where_outside_a_block",
        """
        for i in range(16):
            T.where(i < 8)
            C[i] = 0
        """,
        5,
        "T.where(...) is only valid directly inside",
    ),
    (
        "reads_of_an_undefined_buffer",
        """
        for i in range(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                T.reads(D[vi])
                B[vi] = 1.0
        """,
        7,
        "name 'D' is not defined",
    ),
    (
        "unterminated_bracket_at_eof",
        """
        for i in range(16):
            C[i] = T.max(1,
        """,
        5,
        "unexpected end of input",
    ),
    (
        "unclosed_bracket_before_a_statement",
        """
        C[0] = T.max(1, 2
        for i in range(16):
            C[i] = 1
        """,
        5,
        "unexpected 'for'",
    ),
    (
        "missing_colon",
        """
        for i in range(16)
            C[i] = 1
        """,
        4,
        "unexpected end of line",
    ),
    (
        "missing_indented_block",
        """
        for i in range(16):
        C[i] = 1
        """,
        5,
        "expected an indented block",
    ),
    (
        "return_in_prim_func",
        """
        return C
        """,
        4,
        "return is not supported",
    ),
    (
        "unknown_dtype",
        """
        for i in range(16):
            X = T.alloc_buffer((4,), "floot32")
        """,
        5,
        "unknown dtype 'floot32'",
    ),
    (
        "unknown_thread_tag",
        """
        for i in T.thread_binding(16, thread="threadIdx.w"):
            C[i] = 1
        """,
        4,
        "unknown thread tag 'threadIdx.w'",
    ),
    (
        "unexpected_keyword_argument",
        """
        for i in T.serial(16, step=2):
            C[i] = 1
        """,
        4,
        "unexpected keyword argument 'step'",
    ),
    (
        "reassigned_name",
        """
        x = 1
        x += 1
        """,
        5,
        "needs a buffer element on the left",
    ),
    (
        "non_boolean_condition",
        """
        for i in range(16):
            if i:
                C[i] = 1
        """,
        5,
        "must be a boolean expression",
    ),
    (
        "mixed_dtypes_in_arithmetic",
        """
        for i in range(16):
            B[i] = i + B[0]
        """,
        5,
        "different dtypes",
    ),
    (
        "buffer_call_in_body",
        """
        X = T.Buffer((4,), "float32")
        """,
        4,
        "T.Buffer(...) cannot be used here",
    ),
    (
        "import_in_body",
        """
        import math
        """,
        4,
        "import is not allowed inside a prim_func",
    ),
    (
        "break_in_loop",
        """
        for i in range(16):
            break
        """,
        5,
        "break is not supported",
    ),
    (
        "invalid_character",
        """
        C[0] = 1 $ 2
        """,
        4,
        "invalid character '$'",
    ),
    (
        "comprehension",
        """
        X = [i for i in range(4)]
        """,
        4,
        "comprehensions are not supported",
    ),
    (
        "match_buffer_of_a_buffer",
        """
        X = T.match_buffer(A, (16, 16))
        """,
        4,
        "T.match_buffer matches a T.handle parameter",
    ),
]


@pytest.mark.parametrize("body, line, phrase", [m[1:] for m in MISTAKES], ids=[m[0] for m in MISTAKES])
def test_mistake_is_reported_at_its_line(body, line, phrase):
    with pytest.raises(ParseError) as info:
        tir.parse(_script(body), filename="user.py")
    error = info.value
    assert isinstance(error, SyntaxError)
    assert phrase in str(error), str(error)
    assert (error.filename, error.lineno) == ("user.py", line), str(error)
    assert str(error).startswith(f"user.py:{line}:{error.offset}: error: ")


def test_free_name_bound_to_an_unsupported_object():
    with pytest.raises(ParseError) as info:
        tir.parse(_script("C[0] = helpers\n"), extra_vars={"helpers": textwrap})
    assert "'helpers' is a module object" in info.value.msg and info.value.lineno == 3
    assert "only int, float, bool, str" in info.value.hint


def test_rendering_names_file_line_column_and_marks_the_span():
    text = _script(
        """
        for i, j in T.grid(16, 16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi] = A[vi, vj, 0] * 2.0
        """
    )
    with pytest.raises(ParseError) as info:
        tir.parse(text, filename="file.py", line_offset=10)
    error = info.value
    assert (error.lineno, error.offset) == (17, 21)
    assert str(error).splitlines() == [
        "file.py:17:21: error: buffer A has 2 dimensions but is indexed with 3 indices",
        "    B[vi] = A[vi, vj, 0] * 2.0",
        "            ^^^^^^^^^^^^",
    ]


def test_rendering_shows_the_hint():
    with pytest.raises(ParseError) as info:
        tir.parse(_script("for i in T.serail(16):\n    C[i] = 1\n"), filename="f.py")
    lines = str(info.value).splitlines()
    assert lines[0] == "f.py:3:14: error: unknown TVMScript name T.serail"
    assert lines[1:] == [
        "    for i in T.serail(16):",
        "             ^^^^^^^^",
        "hint: did you mean T.serial?",
    ]


def test_expected_tokens_are_words():
    with pytest.raises(ParseError) as info:
        tir.parse(_script("for i in range(16)\n    C[i] = 1\n"))
    assert info.value.hint == "expected ':'"
    with pytest.raises(ParseError) as info:
        tir.parse(_script("C[0] = T.max(1, 2\nfor i in range(16):\n    C[i] = 1\n"))
    assert info.value.hint == "'(' opened at line 3, column 17 is never closed"


def test_indented_text_keeps_the_user_columns():
    text = textwrap.indent(_script("C[0] = k\n"), "        ")
    with pytest.raises(ParseError) as info:
        tir.parse(text)
    assert (info.value.lineno, info.value.offset) == (3, 20)
    assert info.value.text == "            C[0] = k"


def test_decorated_function_errors_point_into_the_users_file(tmp_path):
    source = "\n".join(
        [
            "from tir import T",
            "",
            "",
            "class Holder:",
            "    @T.prim_func",
            "    def broken(A: T.Buffer((8,), 'float32')):",
            "        for i in range(8):",
            "            A[i, 0] = 1.0",
            "",
        ]
    )
    path = tmp_path / "user_broken.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("user_broken", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["user_broken"] = module
    try:
        with pytest.raises(ParseError) as info:
            spec.loader.exec_module(module)
    finally:
        del sys.modules["user_broken"]
    error = info.value
    assert error.filename == str(path)
    assert (error.lineno, error.offset) == (8, 13)
    assert error.text.strip() == "A[i, 0] = 1.0"
    assert "has 1 dimension but is indexed with 2 indices" in error.msg


def test_function_without_source_asks_for_tir_parse():
    namespace = {"T": T}
    code = "def f(A: T.Buffer((4,), 'float32')):\n    A[0] = T.float32(1)\n"
    exec(compile(code, "<generated>", "exec"), namespace)
    with pytest.raises(ParseError, match="cannot read the source code") as info:
        T.prim_func(namespace["f"])
    assert "tir.parse(text)" in info.value.hint


def test_ir_module_rejects_plain_methods():
    with pytest.raises(ParseError, match="is not a @T.prim_func"):

        @tir.I.ir_module
        class Module:
            def helper(self):
                pass


STRUCTURE_MISTAKES = [
    ("x = 1\n", 1, "a script holds one"),
    ("", 1, "exactly one"),
    ("@T.prim_func\ndef f():\n    pass\n@T.prim_func\ndef g():\n    pass\n", 4, "exactly one"),
    ("@T.something\ndef f():\n    pass\n", 1, "unsupported decorator"),
    ("@I.ir_module\nclass M:\n    def f():\n        pass\n", 3, "needs @T.prim_func"),
    ("def f(A):\n    pass\n", 1, "needs a type annotation"),
    ("def f(A: T.Buffer((4,)) = 1):\n    pass\n", 1, "cannot have a default value"),
    ("def f(A: T.int32,\n      B: T.Buffer((4,), 'floot32')):\n    pass\n", 2, "unknown dtype 'floot32'"),
    ("def f(A: T.Buffer((4,), scope='texture')):\n    pass\n", 1, "unknown storage scope 'texture'"),
]


@pytest.mark.parametrize("text, line, phrase", STRUCTURE_MISTAKES)
def test_script_structure_mistakes(text, line, phrase):
    with pytest.raises(ParseError, match=phrase) as info:
        tir.parse(text)
    assert info.value.lineno == line


def test_parse_error_survives_pickling():
    with pytest.raises(ParseError) as info:
        tir.parse(_script("C[0] = k\n"), filename="p.py")
    again = pickle.loads(pickle.dumps(info.value))
    assert isinstance(again, ParseError) and str(again) == str(info.value)
    assert (again.lineno, again.offset, again.hint) == (info.value.lineno, info.value.offset, info.value.hint)


SEED_MATMUL = """\
@I.ir_module
class MyModuleMatmul():
    @T.prim_func
    def main(A: T.Buffer[(1024, 1024), 'float32'],
             B: T.Buffer[(1024, 1024), 'float32'],
             C: T.Buffer[(1024, 1024), 'float32']):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, j, k in T.grid(1024, 1024, 1024):
            with T.block('C'):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


def _mangled(rng: random.Random, text: str) -> str:
    position = rng.randrange(len(text))
    kind = rng.randrange(3)
    if kind == 0:
        return text[:position]
    if kind == 1:
        return text[:position] + text[position + 1 :]
    return text[:position] + rng.choice("()[]{}:,.=+-*\n \t'\"#x1@") + text[position:]


def test_no_lark_exception_escapes():
    """Truncated and mangled scripts give ParseErrors located in the text, never anything else."""
    rng = random.Random(2024)
    line_count = SEED_MATMUL.count("\n") + 1
    errors = 0
    for _ in range(120):
        text = _mangled(rng, SEED_MATMUL)
        try:
            tir.parse(text)
        except ParseError as error:
            errors += 1
            assert "internal error" not in error.msg, (text, error.msg)
            assert 1 <= error.lineno <= line_count
    assert errors > 60
