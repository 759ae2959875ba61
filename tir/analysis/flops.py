"""FLOP counting: ``tir.flop_count(func_or_mod)``, the number GFLOPS divide by.

Each store counts the floating-point operations of the value it stores (float
add, sub, mul, div, min, max, comparisons, float intrinsics; ``fma`` is two;
vector operations count once per lane), never index arithmetic and never a
block's init. A block with iterators runs once per point of its iterator domain,
whatever the loops around it look like after scheduling, so its count is
multiplied by the product of its iterator extents (and by those of enclosing
blocks with iterators); inside a block without iterators, and in lowered IR,
statements are multiplied by the trip counts of the loops around them. Of the
two branches of an ``if``, the dearer one counts. The matmul of 1024^3 counts
2 * 1024^3.
"""

from __future__ import annotations

from collections.abc import Mapping

from .. import dtype as _dt
from ..arith.const_bound import ConstIntBound, const_int_bound
from ..buffer import Buffer
from ..expr import (
    And,
    BinaryOp,
    BufferLoad,
    Call,
    CmpOp,
    Let,
    Or,
    PrimExpr,
    Select,
    Var,
)
from ..function import IRModule, PrimFunc, resolve_function
from ..functor import child_fields, collect_vars, post_order_visit
from ..matrix_ops import matrix_flops
from ..stmt import (
    Allocate,
    BlockRealize,
    BufferStore,
    Evaluate,
    For,
    IfThenElse,
    LetStmt,
    SeqStmt,
    Stmt,
)


class FlopCountError(ValueError):
    """The count depends on a value that is not known (a symbolic extent)."""


def flop_count(
    func_or_mod: PrimFunc | IRModule,
    shape_vars: Mapping[Var | str, int] | None = None,
    func_name: str | None = None,
) -> int:
    """Floating-point operations one call of the function performs.

    ``shape_vars`` gives values to symbolic extents, by variable or by name
    (``{"n": 1024}``). An IRModule counts its "main" function, or its only one,
    or ``func_name``.
    """
    func = resolve_function(func_or_mod, func_name)
    values = _shape_values(func, shape_vars or {})
    return _Counter(func, values).stmt(func.body, 1, ())


def expr_flops(expr: PrimExpr) -> int:
    """Floating-point operations in evaluating ``expr`` once (index arithmetic excluded)."""
    if isinstance(expr, BufferLoad):
        return 0
    lanes = _dt.lanes_of(expr.dtype)
    if isinstance(expr, CmpOp):
        own = lanes if _dt.is_float(expr.a.dtype) else 0
        return own + expr_flops(expr.a) + expr_flops(expr.b)
    if isinstance(expr, BinaryOp) and not isinstance(expr, (And, Or)):
        own = lanes if _dt.is_float(expr.dtype) else 0
        return own + expr_flops(expr.a) + expr_flops(expr.b)
    if isinstance(expr, Call):
        args = [expr_flops(a) for a in expr.args]
        if expr.op == "if_then_else":
            return args[0] + max(args[1], args[2])
        if not _dt.is_float(expr.dtype) or expr.op == "tvm_storage_sync":
            return sum(args)
        return (2 if expr.op == "fma" else 1) * lanes + sum(args)
    if isinstance(expr, Select):
        return sum(expr_flops(e) for e in (expr.condition, expr.true_value, expr.false_value))
    if isinstance(expr, Let):
        return expr_flops(expr.value) + expr_flops(expr.body)
    return sum(expr_flops(child) for child in _children(expr))


def _children(expr: PrimExpr) -> list[PrimExpr]:
    return [v for v in (getattr(expr, name) for name in child_fields(type(expr))) if isinstance(v, PrimExpr)]


def _shape_values(func: PrimFunc, shape_vars: Mapping[Var | str, int]) -> dict[Var, ConstIntBound]:
    by_name: dict[str, Var] = {}

    def note(node) -> None:
        if isinstance(node, Var):
            by_name.setdefault(node.name, node)

    post_order_visit(func.body, note)
    for param in func.params:
        for expr in param.shape if isinstance(param, Buffer) else (param,):
            post_order_visit(expr, note)
    values: dict[Var, ConstIntBound] = {}
    for key, value in shape_vars.items():
        var = key if isinstance(key, Var) else by_name.get(key)
        if var is None:
            raise ValueError(f"shape_vars names {key!r}, which is not a variable of '{func.name}'")
        values[var] = ConstIntBound(int(value), int(value))
    return values


class _Counter:
    def __init__(self, func: PrimFunc, values: dict[Var, ConstIntBound]):
        self.func = func
        self.values = values

    def extent(self, extent: PrimExpr, what: str) -> int:
        bound = const_int_bound(extent, self.values)
        if not bound.is_const:
            names = sorted(v.name for v in collect_vars(extent)) or ["n"]
            example = ", ".join(f"{name!r}: 1024" for name in names)
            raise FlopCountError(
                f"{what} has the extent {extent!r}, which is not a constant; pass its value, e.g. "
                f"tir.flop_count(func, shape_vars={{{example}}})"
            )
        return max(bound.min_value, 0)

    def stmt(self, s: Stmt, instances: int, loops: tuple[For, ...]) -> int:
        """FLOPs of ``s`` inside blocks instantiated ``instances`` times, under ``loops``
        (the loops since the innermost block with iterators)."""
        if isinstance(s, SeqStmt):
            return sum(self.stmt(child, instances, loops) for child in s.seq)
        if isinstance(s, For):
            return self.stmt(s.body, instances, (*loops, s))
        if isinstance(s, BlockRealize):
            block = s.block
            if not block.iter_vars:
                return self.stmt(block.body, instances, loops)
            for iv in block.iter_vars:
                instances *= self.extent(iv.dom.extent, f"block '{block.name}': iterator {iv.var.name}")
            return self.stmt(block.body, instances, ())
        if isinstance(s, BufferStore):
            return self.times(expr_flops(s.value), instances, loops)
        if isinstance(s, IfThenElse):
            then_flops = self.stmt(s.then_case, instances, loops)
            else_flops = self.stmt(s.else_case, instances, loops) if s.else_case is not None else 0
            return max(then_flops, else_flops)
        if isinstance(s, LetStmt):
            return self.times(expr_flops(s.value), instances, loops) + self.stmt(s.body, instances, loops)
        if isinstance(s, Allocate):
            return self.stmt(s.body, instances, loops)
        if isinstance(s, Evaluate):
            return self.times(matrix_flops(s.value), instances, loops)
        raise TypeError(f"flop_count does not know {type(s).__name__} statements")

    def times(self, flops: int, instances: int, loops: tuple[For, ...]) -> int:
        # Trip counts are evaluated only where they matter, so loops around a block
        # with iterators may have symbolic extents.
        for loop in loops:
            if not flops:
                break
            flops *= self.extent(loop.extent, f"loop {loop.loop_var.name}")
        return flops * instances
