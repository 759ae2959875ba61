"""tir: the tensor IR, its TVMScript front end, analyses, transforms and executor.

    from tir import T, I

    @T.prim_func
    def add(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                B[vi] = A[vi] + T.float32(1)

    add.show()
    tir.interpret(add, a, b)

Nothing here imports the schedule, the code generators or the tuner.
"""

from __future__ import annotations

import importlib

from . import dtype, op
from .buffer import Buffer, BufferRegion, decl_buffer
from .expr import (
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
    Call,
    Cast,
    CmpOp,
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
    const,
)
from .function import IRModule, PrimFunc
from .functor import Mutator, Visitor, post_order_visit, substitute
from .index_map import IndexMap, IndexMapError
from .stmt import (
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

# Loaded on first use so that `import tir` stays fast and light.
_LAZY = {
    "T": ("tir.script.namespace", "T"),
    "I": ("tir.script.namespace", "I"),
    "script": ("tir.script", None),
    "parse": ("tir.script.parser", "parse"),
    "ParseError": ("tir.script.errors", "ParseError"),
    "structural_equal": ("tir.structural", "structural_equal"),
    "structural_hash": ("tir.structural", "structural_hash"),
    "assert_structural_equal": ("tir.structural", "assert_structural_equal"),
    "interpret": ("tir.interpret", "interpret"),
    "flop_count": ("tir.analysis.flops", "flop_count"),
    "verify_well_formed": ("tir.analysis.well_formed", "verify_well_formed"),
    "WellFormedError": ("tir.analysis.well_formed", "WellFormedError"),
}


def __getattr__(name: str):
    if name in _LAZY:
        module_name, attr = _LAZY[name]
        module = importlib.import_module(module_name)
        value = module if attr is None else getattr(module, attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tir' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_LAZY))
