"""Script values: what evaluating a TVMScript expression tree can give besides IR nodes.

Names in the T namespace (``_TRef``) and the builtins ``T``, ``I`` and ``range``; markers, the
values only one statement form can use (a loop to open, a buffer or block iterator to declare,
a block directive); the per-block frame the statements of a ``with T.block`` fill in; and the
small value helpers (describing a value in a message, index dtypes, region extents, dtype
limits) that the builder's mixins share: script_scope.py, script_exprs.py,
script_buffer_access.py, script_calls.py, script_expr_calls.py and script_builder.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lark import Tree

from .. import dtype as _dt
from .. import op
from ..buffer import Buffer, BufferRegion
from ..expr import Add, FloatImm, IntImm, IterKind, IterVar, PrimExpr, Range, Var, const
from ..stmt import Evaluate, ForKind, Stmt

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
    layout: tuple[tuple[str, Any], ...] = ()  # Buffer keywords: strides, elem_offset, ...
    usage = "assign it to a name: B = T.alloc_buffer(...)"


@dataclass(frozen=True)
class _RegionMatch(_Marker):
    """``T.match_buffer(B[vi : vi + 1, vj], (1, 1))`` inside a block, before it has a name."""

    name: str
    region: BufferRegion
    shape: tuple[PrimExpr, ...]
    dtype: str
    scope: str
    usage = "assign it to a name: Bb = T.match_buffer(B[vi, 0:16], (16,))"


@dataclass(frozen=True)
class _RegionView:
    """A name bound to a block's ``T.match_buffer`` of a buffer region. The match is lowered as
    it is parsed (what TVM's LowerMatchBuffer does before code generation): ``Bb[i, j]`` is the
    element ``B[vi + i, vj + j]`` of the source, so the block reads and writes ``B`` itself.
    ``view`` has the matched shape, for checking the indices."""

    name: str
    region: BufferRegion
    view: Buffer

    def source_indices(self, indices: tuple[PrimExpr, ...]) -> tuple[PrimExpr, ...]:
        """The source element of ``view[indices]``: leading region axes of extent 1 stay at their
        start, the others are offset by the region's start."""
        dims = self.region.region
        leading = len(dims) - len(indices)
        fixed = tuple(r.min for r in dims[:leading])
        return fixed + tuple(op.add(r.min, i) for r, i in zip(dims[leading:], indices))


@dataclass(frozen=True)
class _BufferSpec(_Marker):
    name: str
    shape: tuple[PrimExpr, ...]
    dtype: str
    scope: str
    layout: tuple[tuple[str, Any], ...] = ()
    usage = "T.Buffer(...) is the type of a parameter; in the body use T.alloc_buffer or T.decl_buffer"


@dataclass(frozen=True)
class _BufferMethod:
    """``A.access_ptr``: a buffer's method, waiting for its call."""

    buffer: Buffer
    name: str


@dataclass(frozen=True)
class _ThreadEnv(_Marker):
    """``T.env_thread(tag)``: names a thread variable that a later ``T.launch_thread`` launches."""

    name: str
    tag: str
    usage = 'assign it to a name: tx = T.env_thread("threadIdx.x")'


@dataclass(frozen=True)
class _ThreadLaunch(_Marker):
    """``T.launch_thread(tag_or_var, extent)``: a thread-bound loop over the statements it covers."""

    name: str
    tag: str
    extent: PrimExpr
    var: Var | None = None
    usage = (
        'tx = T.launch_thread("threadIdx.x", n), or with T.launch_thread(tx, n): for tx = T.env_thread(...)'
    )


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
    """``T.block(name)``, ``T.init()``, ``T.LetStmt(value)`` or the older ``T.let(x, value)``
    (``var`` is its x): the head of a with statement."""

    name: str
    label: str | None = None
    value: PrimExpr | None = None
    var: Var | None = None
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
    axis_nodes: list[Tree] = field(default_factory=list)  # where each iterator is declared, for errors
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


def _same_dtype(a: Any, b: Any) -> tuple[PrimExpr, PrimExpr]:
    """Operands of a node built directly (not through tir.op): numbers take the other's dtype."""
    if not isinstance(a, PrimExpr):
        a = const(a, b.dtype if isinstance(b, PrimExpr) else None)
    if not isinstance(b, PrimExpr):
        b = const(b, a.dtype)
    if a.dtype != b.dtype:
        raise TypeError(f"operands have different dtypes: {a.dtype} and {b.dtype}; convert one with T.Cast")
    return a, b
