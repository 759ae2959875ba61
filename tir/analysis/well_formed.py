"""Well-formedness of PrimFuncs: ``tir.verify_well_formed(func, raise_error=True)``.

Checks what every pass and schedule primitive must preserve, and reports every
problem found in one ``WellFormedError``, each line naming the block or loop:

- each variable is used inside the scope that defines it (loop variables in the
  loop body, block iterators in their block, let variables in the let body;
  parameters and shape variables are visible everywhere), and is not defined
  again inside its own scope;
- a block with iterators uses no loop or let variable defined outside it (only
  iterators, its own and those of the blocks around it, variables it defines
  inside, parameters and shape variables), as in TVM; its bindings, ``T.where``
  and iterator domains are evaluated outside it and may use the loops around it;
  blocks without iterators (opaque blocks) see their context;
- block names are unique; a realize binds one value per iterator;
- each binding stays inside its iterator's domain over the ranges of the loops
  around it (by constant interval bounds; a binding whose variables appear in
  the block's ``T.where`` is left to the predicate);
- every accessed buffer (load, store, read/write region) is a parameter or
  allocated around the access (``alloc_buffers`` of an enclosing block, or
  ``Allocate``), and is indexed with as many indices as it has dimensions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from ..arith.const_bound import NEG_INF, POS_INF, ConstIntBound, bound_of_dtype, const_int_bound
from ..buffer import Buffer, BufferRegion
from ..expr import BufferLoad, IntImm, IterVar, Let, PrimExpr, Var
from ..function import IRModule, PrimFunc
from ..functor import child_fields, collect_vars
from ..stmt import (
    Allocate,
    Block,
    BlockRealize,
    BufferStore,
    Evaluate,
    For,
    IfThenElse,
    LetStmt,
    SeqStmt,
    Stmt,
)


class WellFormedError(ValueError):
    """A function breaks the IR's invariants; the message lists every problem found."""


def verify_well_formed(
    func: PrimFunc | IRModule, raise_error: bool = True, show_script: bool = False
) -> bool:
    """True if ``func`` (or every function of a module) is well formed.

    Otherwise raise ``WellFormedError`` listing all problems, or return False when
    ``raise_error`` is False. With ``show_script`` the error also prints the
    program with each offending block underlined (``Schedule(...)`` does this for
    programs built in Python, which have no source lines to point at).
    """
    if isinstance(func, IRModule):
        checkers = [(f"{name}: ", _Checker(member)) for name, member in func.functions.items()]
        title = f"module {func.name}"
    elif isinstance(func, PrimFunc):
        checkers = [("", _Checker(func))]
        title = f"function '{func.name}'"
    else:
        raise TypeError(f"verify_well_formed needs a PrimFunc or an IRModule, got {type(func).__name__}")
    problems, marks = [], {}
    for prefix, checker in checkers:
        problems += [prefix + p for p in checker.run()]
        marks.update(checker.marks)
    if problems and raise_error:
        count = f"{len(problems)} problem{'s' if len(problems) > 1 else ''}"
        text = f"{title} is not well formed ({count}):\n" + "\n".join(f"  - {p}" for p in problems)
        if show_script:
            from ..script.printer import to_script

            text += "\n\n" + to_script(func, marks=marks)
        raise WellFormedError(text)
    return not problems


@dataclass(frozen=True)
class _Definition:
    kind: str  # "loop variable", "iterator", "let variable"
    owner: str  # where it is defined, for messages
    depth: int  # number of blocks with iterators around the definition


class _Checker:
    def __init__(self, func: PrimFunc):
        self.func = func
        self.globals: set[Var] = {p for p in func.params if isinstance(p, Var)}
        for buffer in func.buffer_params:
            for dim in buffer.shape:
                self.globals |= collect_vars(dim)
        self.defined: dict[Var, _Definition] = {}
        self.bounds: dict[Var, ConstIntBound] = {}
        self.buffers: Counter[Buffer] = Counter(func.buffer_params)
        self.blocks: list[Block] = []  # enclosing blocks with iterators
        self.context: list[str] = []  # enclosing blocks and loops, for messages
        self.problems: dict[str, None] = {}
        self.marks: dict[Block, str] = {}  # offending blocks, underlined when the script is shown

    def run(self) -> list[str]:
        self.stmt(self.func.body)
        return list(self.problems)

    def report(self, message: str, node: Block | None = None) -> None:
        self.problems.setdefault(message, None)
        if node is not None:
            self.marks.setdefault(node, message)

    def where(self) -> str:
        if not self.context:
            return f"function '{self.func.name}'"
        return self.context[-1]

    # ------------------------------------------------------------ scopes

    def define(self, var: Var, kind: str, owner: str, bound: ConstIntBound | None):
        previous = self.defined.get(var), self.bounds.get(var)
        if previous[0] is not None or var in self.globals:
            self.report(
                f"{self.where()}: {kind} {var.name} is defined again inside the scope that already defines it"
            )
        self.defined[var] = _Definition(kind, owner, len(self.blocks))
        self.bounds[var] = bound or bound_of_dtype(var.dtype)
        return var, previous

    def undefine(self, token) -> None:
        var, (definition, bound) = token
        for table, old in ((self.defined, definition), (self.bounds, bound)):
            if old is None:
                table.pop(var, None)
            else:
                table[var] = old

    def use(self, var: Var) -> None:
        if var in self.globals:
            return
        definition = self.defined.get(var)
        if definition is None:
            self.report(
                f"{self.where()}: variable {var.name} is used outside the scope that defines it "
                "(it is not a parameter, a shape variable, or a loop, iterator or let variable in scope)"
            )
        elif definition.depth < len(self.blocks) and definition.kind != "iterator":
            self.report(
                f"block '{self.blocks[-1].name}' uses {definition.kind} {var.name} of {definition.owner}, "
                "defined outside the block; a block with iterators may only use its own iterators: "
                f"bind one to {var.name} with T.axis and use it instead",
                self.blocks[-1],
            )

    # ------------------------------------------------------------ expressions

    def expr(self, e) -> None:
        if isinstance(e, Var):
            self.use(e)
            return
        if isinstance(e, BufferLoad):
            self.access(e.buffer, len(e.indices), "loads")
        if isinstance(e, Let):
            self.expr(e.value)
            token = self.define(e.var, "let variable", f"the let of {e.var.name}", self.bound(e.value))
            self.expr(e.body)
            self.undefine(token)
            return
        for name in child_fields(type(e)):
            value = getattr(e, name)
            for child in value if isinstance(value, tuple) else (value,):
                if isinstance(child, PrimExpr):
                    self.expr(child)

    def bound(self, value: PrimExpr) -> ConstIntBound:
        return const_int_bound(value, self.bounds)

    def access(self, buffer: Buffer, rank: int, verb: str) -> None:
        if not self.buffers[buffer]:
            self.report(
                f"{self.where()} {verb} buffer {buffer.name}, which is neither a parameter nor allocated "
                "around the access (T.alloc_buffer in an enclosing block, or Allocate)"
            )
        if rank != len(buffer.shape):
            self.report(
                f"{self.where()} {verb} buffer {buffer.name} of {len(buffer.shape)} dimensions "
                f"with {rank} indices"
            )

    def region(self, region: BufferRegion, verb: str) -> None:
        self.access(region.buffer, len(region.region), verb)
        for r in region.region:
            self.expr(r.min)
            self.expr(r.extent)

    def allocate(self, buffer: Buffer) -> None:
        for dim in buffer.shape:
            self.expr(dim)
        self.buffers[buffer] += 1

    # ------------------------------------------------------------ statements

    def stmt(self, s: Stmt) -> None:
        if isinstance(s, SeqStmt):
            for child in s.seq:
                self.stmt(child)
        elif isinstance(s, For):
            self.loop(s)
        elif isinstance(s, BlockRealize):
            self.realize(s)
        elif isinstance(s, BufferStore):
            self.access(s.buffer, len(s.indices), "stores to")
            self.expr(s.value)
            for index in s.indices:
                self.expr(index)
        elif isinstance(s, IfThenElse):
            self.expr(s.condition)
            self.stmt(s.then_case)
            if s.else_case is not None:
                self.stmt(s.else_case)
        elif isinstance(s, LetStmt):
            self.expr(s.value)
            token = self.define(s.var, "let variable", f"the let of {s.var.name}", self.bound(s.value))
            self.stmt(s.body)
            self.undefine(token)
        elif isinstance(s, Allocate):
            self.allocate(s.buffer)
            self.stmt(s.body)
            self.buffers[s.buffer] -= 1
        elif isinstance(s, Evaluate):
            self.expr(s.value)
        else:
            self.report(f"{self.where()}: unexpected {type(s).__name__} statement")

    def loop(self, s: For) -> None:
        self.expr(s.min)
        self.expr(s.extent)
        bound = loop_bound(s.min, s.extent, self.bounds)
        token = self.define(s.loop_var, "loop variable", f"loop {s.loop_var.name}", bound)
        self.context.append(f"loop {s.loop_var.name}")
        self.stmt(s.body)
        self.context.pop()
        self.undefine(token)

    def realize(self, s: BlockRealize) -> None:
        block = s.block
        for value in s.iter_values:
            self.expr(value)
        self.expr(s.predicate)
        if len(s.iter_values) != len(block.iter_vars):
            self.report(
                f"block '{block.name}' has {len(block.iter_vars)} iterators but its realize binds "
                f"{len(s.iter_values)} values"
            )
        for iter_var, value in zip(block.iter_vars, s.iter_values):
            problem = binding_problem(block.name, iter_var, value, s.predicate, self.bounds)
            if problem is not None:
                self.report(problem, block)
        for iter_var in block.iter_vars:  # domains, like bindings, are read outside the block
            self.expr(iter_var.dom.min)
            self.expr(iter_var.dom.extent)
        if block.iter_vars:
            self.blocks.append(block)
        self.context.append(f"block '{block.name}'")
        tokens = []
        for iter_var in block.iter_vars:
            bound = _range_bound(self.bound(iter_var.dom.min), self.bound(iter_var.dom.extent))
            tokens.append(self.define(iter_var.var, "iterator", f"block '{block.name}'", bound))
        for buffer in block.alloc_buffers:
            self.allocate(buffer)
        for region in block.reads:
            self.region(region, "reads")
        for region in block.writes:
            self.region(region, "writes")
        if block.init is not None:
            self.stmt(block.init)
        self.stmt(block.body)
        for buffer in block.alloc_buffers:
            self.buffers[buffer] -= 1
        for token in reversed(tokens):
            self.undefine(token)
        self.context.pop()
        if block.iter_vars:
            self.blocks.pop()


def loop_bound(low: PrimExpr, extent: PrimExpr, bounds: Mapping[Var, ConstIntBound]) -> ConstIntBound | None:
    """Constant bounds of a loop variable over ``[low, low + extent)``, or None when unbounded. A loop
    of extent 0 never runs: its variable gets infinite bounds, so bindings under it go unchecked."""
    start, size = const_int_bound(low, bounds), const_int_bound(extent, bounds)
    if size.max_value <= 0:  # the loop never runs: its variable takes no value to check against
        return ConstIntBound(NEG_INF, POS_INF)
    if start.min_value == NEG_INF or max(start.max_value, size.max_value) == POS_INF:
        return None
    return ConstIntBound(start.min_value, start.max_value + max(size.max_value, 1) - 1)


def binding_problem(
    block_name: str,
    iter_var: IterVar,
    value: PrimExpr,
    predicate: PrimExpr,
    bounds: Mapping[Var, ConstIntBound],
) -> str | None:
    """Why binding ``iter_var`` to ``value`` leaves its domain, or None when it provably stays inside.

    ``bounds`` holds the constant ranges of the loops around the block. Undecidable
    bindings (a domain or a loop that is not constant) and bindings whose variables
    appear in the block's ``T.where`` (the predicate guards them) are accepted.
    """
    domain = _range_bound(
        const_int_bound(iter_var.dom.min, bounds), const_int_bound(iter_var.dom.extent, bounds)
    )
    if domain is None:
        return None
    if not collect_vars(value) <= bounds.keys():
        return None
    reach = const_int_bound(value, bounds)
    if reach.min_value == NEG_INF or reach.max_value == POS_INF or reach.within(*_pair(domain)):
        return None
    guarded = not (isinstance(predicate, IntImm) and predicate.value)
    if guarded and collect_vars(value) & collect_vars(predicate):
        return None
    low, high = domain.min_value, domain.max_value + 1
    return (
        f"block '{block_name}': iterator {iter_var.var.name} has domain [{low}, {high}) but is bound "
        f"to {value!r}, which ranges over [{reach.min_value}, {reach.max_value}]; guard the block "
        "with T.where or fix the loop extents"
    )


def _range_bound(low: ConstIntBound, size: ConstIntBound) -> ConstIntBound | None:
    """Bounds of ``[low, low + size)`` when both are constants, else None."""
    if not (low.is_const and size.is_const):
        return None
    return ConstIntBound(low.min_value, low.min_value + size.min_value - 1)


def _pair(bound: ConstIntBound) -> tuple[int, int]:
    return bound.min_value, bound.max_value
