"""The runtime objects ``T`` and ``I`` that TVMScript programs are written against.

A decorated program is never executed: ``@T.prim_func`` reads the function's
source and hands it to tir/script/parser.py, and ``@I.ir_module`` collects the
PrimFuncs that its methods already became. Python does evaluate annotations and
decorators when the ``def`` runs, so ``T.Buffer((1024,), "float32")``,
``T.Buffer[(1024,), "float32"]``, ``T.handle`` and ``T.int32`` are real, harmless
objects here. Every other name the parser understands also exists (so IDEs and
``dir(T)`` list it) as a stub that explains it only has meaning inside a
``@T.prim_func`` body. ``T_FUNCTIONS`` is the catalogue the parser dispatches on.
A ParseError leaves the decorators without the parser's frames (the user sees
their line, the caret and the message); ``TIR_PARSER_TRACEBACK=1`` keeps them.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from .. import dtype as _dt
from .. import op as _op

# Script functions other than the dtypes and intrinsics, with one line each for help().
T_FUNCTIONS: dict[str, str] = {
    "block": 'with T.block("name"): a block, the unit a schedule transforms',
    "init": "with T.init(): the statement run before the first step of a reduction",
    "axis.spatial": "vi = T.axis.spatial(dom, binding): a spatial block iterator",
    "axis.reduce": "vk = T.axis.reduce(dom, binding): a reduction block iterator",
    "axis.opaque": "v = T.axis.opaque(dom, binding): an iterator of unknown access pattern",
    "axis.scan": "v = T.axis.scan(dom, binding): an iterator whose steps depend on earlier ones",
    "axis.S": "short for T.axis.spatial",
    "axis.R": "short for T.axis.reduce",
    "axis.O": "short for T.axis.opaque",
    "axis.remap": 'vi, vj = T.axis.remap("SR", [i, j]): iterators bound to loops, domains from them',
    "reads": "T.reads(A[vi, 0:16], ...): the regions a block reads",
    "writes": "T.writes(C[vi, vj]): the regions a block writes",
    "where": "T.where(cond): the block runs only where cond holds",
    "block_attr": "T.block_attr({...}): annotations of the enclosing block",
    "func_attr": "T.func_attr({...}): attributes of the function",
    "alloc_buffer": 'B = T.alloc_buffer(shape, dtype="float32", scope="global"): a buffer of a block',
    "decl_buffer": "B = T.decl_buffer(shape, dtype, scope): storage for the statements that follow",
    "match_buffer": "A = T.match_buffer(a, shape, dtype): the buffer behind a T.handle parameter",
    "var": 'n = T.var("int32"): a symbolic variable (also n = T.int32())',
    "LetStmt": "with T.LetStmt(value) as x: x is bound to value in the indented statements",
    "Let": "T.Let(body, where={x: value}): the expression body with x bound to value",
    "let": "T.let(x, value, body) / with T.let(x, value): the older spelling of T.Let / T.LetStmt",
    "grid": "for i, j in T.grid(n, m): nested serial loops",
    "serial": "for i in T.serial(n) / T.serial(a, b): a serial loop",
    "parallel": "for i in T.parallel(n): a loop whose iterations run on CPU threads",
    "vectorized": "for i in T.vectorized(n): a loop turned into vector operations",
    "unroll": "for i in T.unroll(n): a loop unrolled by the compiler",
    "thread_binding": 'for i in T.thread_binding(n, thread="threadIdx.x"): a loop bound to GPU threads',
    "evaluate": "T.evaluate(expr): an expression evaluated for its effect",
    "Cast": 'T.Cast("float32", x): convert x to a dtype',
    "cast": 'T.cast(x, "float32"): convert x to a dtype',
    "max": "T.max(a, b)",
    "min": "T.min(a, b)",
    "abs": "T.abs(x): absolute value",
    "floordiv": "T.floordiv(a, b): division rounding down (a // b)",
    "floormod": "T.floormod(a, b): remainder of floordiv (a % b)",
    "ceildiv": "T.ceildiv(a, b): integer division rounding up, (a + b - 1) // b for b > 0",
    "truncdiv": "T.truncdiv(a, b): integer division rounding toward zero",
    "truncmod": "T.truncmod(a, b): remainder of truncdiv",
    "Select": "T.Select(cond, a, b): a if cond else b, both evaluated",
    "And": "T.And(a, b): logical and",
    "Or": "T.Or(a, b): logical or",
    "Not": "T.Not(a): logical not",
    "max_value": 'T.max_value("float32"): the largest finite value of a dtype',
    "min_value": 'T.min_value("float32"): the lowest finite value of a dtype',
    "Ramp": "T.Ramp(base, stride, lanes): the vector base, base + stride, ...",
    "Broadcast": "T.Broadcast(value, lanes): value in every lane",
    "simdgroup_load": "T.simdgroup_load(F[0:8, 0:8], A[0:8, 0:8]): Metal, an 8x8 tile into a fragment",
    "simdgroup_store": "T.simdgroup_store(F[0:8, 0:8], C[0:8, 0:8]): Metal, a fragment to memory",
    "simdgroup_fill": "T.simdgroup_fill(F[0:8, 0:8], value): Metal, a fragment filled with value",
    "simdgroup_multiply_accumulate": "T.simdgroup_multiply_accumulate(D, A, B, C) tiles: D = A @ B + C",
    "wmma_load_matrix_sync": "T.wmma_load_matrix_sync(F[0:16, 0:16], A[0:16, 0:16]): CUDA WMMA load",
    "wmma_store_matrix_sync": "T.wmma_store_matrix_sync(F[0:16, 0:16], C[0:16, 0:16]): CUDA WMMA store",
    "wmma_fill_fragment": "T.wmma_fill_fragment(F[0:16, 0:16], value): CUDA WMMA fill",
    "wmma_mma_sync": "T.wmma_mma_sync(D, A, B, C) 16x16 tiles: CUDA WMMA D = A @ B + C",
    "mma_ldmatrix_a": "T.mma_ldmatrix_a(F[0:16, 0:16], A_shared[0:16, 0:16]): ldmatrix.x4 into registers",
    "mma_ldmatrix_b": "T.mma_ldmatrix_b(F[0:16, 0:8], B_shared[0:16, 0:8]): ldmatrix.x2.trans",
    "mma_fill": "T.mma_fill(F[0:16, 0:8], value): an mma.sync accumulator filled with value",
    "mma_store": "T.mma_store(F[0:16, 0:8], C[0:16, 0:8]): an mma.sync accumulator to memory",
    "mma_sync_m16n8k16": "T.mma_sync_m16n8k16(D, A, B, C): mma.sync.m16n8k16, D = A @ B + C",
    "ramp": "T.ramp(base, stride, lanes): TVM's other spelling of T.Ramp",
    "broadcast": "T.broadcast(value, lanes): TVM's other spelling of T.Broadcast",
    "reinterpret": 'T.reinterpret("int32", x): the bits of x read as another dtype of the same width',
    "call_extern": 'T.call_extern("float32", "name", *args): a call of an external C function',
    "call_packed": 'T.call_packed("name", *args): a call through TVM\'s packed-function runtime',
    "launch_thread": 'tx = T.launch_thread("threadIdx.x", n): the rest of the body runs on n threads',
    "env_thread": 'tx = T.env_thread("threadIdx.x"): a thread variable for `with T.launch_thread(tx, n):`',
}
# Scalar dtypes double as constructors: T.float32(0), T.int32(x) (a cast), n = T.int32().
T_DTYPES = _dt.SCALAR_TYPES
T_INTRINSICS = tuple(_op.INTRINSICS)
T_OPAQUE_CALLS = tuple(name for name in _op.OPAQUE_CALLS if name not in T_FUNCTIONS)
_SCRIPT_ONLY = "only has meaning inside a @T.prim_func body, which is parsed and never run"


class ScriptName:
    """A name that exists so that annotations evaluate and IDEs see it; parsed, never called."""

    def __init__(self, path: str, doc: str):
        self.script_path = path
        self.__doc__ = doc

    def __call__(self, *args: Any, **kwargs: Any):
        raise RuntimeError(
            f"T.{self.script_path}(...) {_SCRIPT_ONLY}; decorate the function with @T.prim_func"
        )

    def __repr__(self) -> str:
        return f"T.{self.script_path}"


class _DtypeName(ScriptName):
    """``T.int64`` and friends: outside a prim_func body (in a parameter annotation such as
    ``T.Buffer((T.int64(128),))``, evaluated when Python defines the function) a number gives a
    constant of that dtype, as in TVM; inside one the parser reads them."""

    def __call__(self, *args: Any, **kwargs: Any):
        number = len(args) == 1 and isinstance(args[0], (int, float)) and not isinstance(args[0], bool)
        if number and not kwargs:
            from ..expr import const

            return const(args[0], self.script_path)
        return super().__call__(*args, **kwargs)


class BufferType:
    """What ``T.Buffer(shape, dtype)`` evaluates to in an annotation at def time (the parser reads
    the annotation's text; layout keywords such as ``axis_separators=`` are kept here as given)."""

    def __init__(self, shape: Any, dtype: str = "float32", scope: str = "global", **layout: Any):
        self.shape, self.dtype, self.scope, self.layout = shape, dtype, scope, layout

    def __repr__(self) -> str:
        return f"T.Buffer({self.shape!r}, {self.dtype!r}, scope={self.scope!r})"


class _BufferName(ScriptName):
    """``T.Buffer``: callable (new spelling) and subscriptable (old spelling)."""

    def __call__(
        self, shape: Any, dtype: str = "float32", scope: str = "global", **layout: Any
    ) -> BufferType:
        return BufferType(shape, dtype, scope, **layout)

    def __getitem__(self, key: Any) -> BufferType:
        return BufferType(*key) if isinstance(key, tuple) else BufferType(key)


class _Namespace:
    """Attribute access with a did-you-mean error for names the script language lacks."""

    def __init__(self, prefix: str, members: dict[str, Any]):
        self._prefix = prefix
        self.__dict__.update(members)

    def __getattr__(self, name: str):
        import difflib

        known = [n for n in vars(self) if not n.startswith("_")]
        close = difflib.get_close_matches(name, known, n=1)
        hint = f"; did you mean {self._prefix}.{close[0]}?" if close else ""
        raise AttributeError(f"{self._prefix} has no attribute {name!r}{hint}")

    def __dir__(self) -> list[str]:
        return sorted(n for n in vars(self) if not n.startswith("_"))

    def __repr__(self) -> str:
        return f"<TVMScript namespace {self._prefix}>"


def prim_func(func: Callable | None = None, *, private: bool = False):
    """Decorator: parse the function's source into a :class:`tir.PrimFunc`.

    ``private`` is accepted for TVM compatibility; functions get no implicit
    attributes either way (write ``T.func_attr`` to set ``global_symbol``).
    """
    if func is None:
        return lambda f: prim_func(f, private=private)
    from .errors import ParseError
    from .parser import parse_function

    try:
        return parse_function(func)
    except ParseError as error:
        raise _shown_to_users(error)  # noqa: B904 - the error itself (file, line, caret) is what to show


def ir_module(cls: type):
    """Class decorator: collect the class's ``@T.prim_func`` methods into an IRModule."""
    from .errors import ParseError
    from .parser import parse_module

    try:
        return parse_module(cls)
    except ParseError as error:
        raise _shown_to_users(error)  # noqa: B904 - the error itself (file, line, caret) is what to show


# Set to 1 to see the parser's own frames and exception chain under a ParseError.
PARSER_TRACEBACK_VARIABLE = "TIR_PARSER_TRACEBACK"


def _shown_to_users(error: Exception) -> Exception:
    """``error`` without the parser's frames and chained exceptions, which say nothing to users;
    unchanged when ``TIR_PARSER_TRACEBACK`` is set."""
    if os.environ.get(PARSER_TRACEBACK_VARIABLE, "") not in ("", "0"):
        return error
    error.__cause__ = None
    error.__suppress_context__ = True
    return error.with_traceback(None)


def _make_t() -> _Namespace:
    members: dict[str, Any] = {}
    axis: dict[str, Any] = {}
    for path, doc in T_FUNCTIONS.items():
        head, _, tail = path.partition(".")
        if tail:
            axis[tail] = ScriptName(path, doc)
        else:
            members[head] = ScriptName(path, doc)
    for name in T_DTYPES:
        members[name] = _DtypeName(name, f"the {name} dtype; T.{name}(x) makes a constant or a cast")
    for name in T_INTRINSICS:
        members[name] = ScriptName(name, f"the {name} intrinsic")
    for name in T_OPAQUE_CALLS:
        members[name] = ScriptName(name, f"the {name} intrinsic, carried as an opaque call")
    members["handle"] = ScriptName("handle", "an untyped pointer parameter, matched with T.match_buffer")
    members["Buffer"] = _BufferName("Buffer", "T.Buffer(shape, dtype): a buffer parameter's type")
    members["axis"] = _Namespace("T.axis", axis)
    members["prim_func"] = prim_func
    return _Namespace("T", members)


T = _make_t()
I = _Namespace("I", {"ir_module": ir_module})  # noqa: E741 - TVM's name for the module namespace
