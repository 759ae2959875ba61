"""insert_runtime_checks: guard every access the prover cannot decide, and every integer divisor.

Runs in checked builds (``build(mod, target, check_bounds=True)``) after
lower_opaque_block, while buffers still have their shapes. Each index that
``tir.analysis.access_bounds`` cannot prove in bounds becomes
``T.call("tir.check_index", index, extent, site, state)`` and each integer
divisor not provably non-zero ``T.call("tir.check_divisor", divisor, site, state)``.
The printers spell them as small helpers: a failing check records
``state[2 * site] = 1`` and the offending value in ``state[2 * site + 1]``, then
goes on with a safe value (index 0, divisor 1), so the kernel never touches
memory outside its buffers. ``state`` is a new last parameter,
``tir_check_state`` (int64, two slots per site), which the runtime allocates,
zeroes and reads back after the launch. ``attrs["check_sites"]`` describes each
site for the error message: ``(kind, buffer, access, dimension, extent)``.

Before: ``B[i] = A[idx[i]]`` -> after:
``B[i] = A[T.call("tir.check_index", idx[i], 64, 0, tir_check_state[0])]``.
"""

from __future__ import annotations

from dataclasses import replace

from .. import dtype as _dt
from ..analysis.access_bounds import IN_BOUNDS, AccessWalker, Verdict
from ..buffer import Buffer
from ..expr import BufferLoad, Call, IntImm, PrimExpr
from ..function import PrimFunc
from ..functor import substitute_buffers
from ..stmt import BufferStore

CHECK_STATE = "tir_check_state"
CHECK_INDEX, CHECK_DIVISOR = "tir.check_index", "tir.check_divisor"


class _CheckInserter(AccessWalker):
    def __init__(self, state: Buffer) -> None:
        super().__init__()
        self.state = state
        self.sites: list[tuple[str, str, str, int, str]] = []

    def site(self, kind: str, buffer: str, access: str, dim: int, extent: str) -> IntImm:
        self.sites.append((kind, buffer, access, dim, extent))
        return IntImm(len(self.sites) - 1)

    def state_slot(self) -> BufferLoad:
        return BufferLoad(self.state, (IntImm(0),))

    def access(self, node: BufferLoad | BufferStore, verdicts: list[Verdict]):
        if all(v.status == IN_BOUNDS for v in verdicts):
            return node
        text = f"{node.buffer.name}[{', '.join(repr(i) for i in node.indices)}]"
        indices = []
        for dim, (index, extent, verdict) in enumerate(zip(node.indices, node.buffer.shape, verdicts)):
            if verdict.status != IN_BOUNDS:
                site = self.site("index", node.buffer.name, text, dim, repr(extent))
                index = Call(index.dtype, CHECK_INDEX, (index, extent, site, self.state_slot()))
            indices.append(index)
        return replace(node, indices=tuple(indices))

    def division(self, node: PrimExpr) -> PrimExpr:
        divisor = node.b
        if not _dt.is_integer(divisor.dtype) or _dt.lanes_of(divisor.dtype) > 1:
            return node
        bound = self.analyzer.const_int_bound(divisor)
        if bound.min_value > 0 or bound.max_value < 0:
            return node
        site = self.site("divisor", "", repr(node), 0, "")
        return replace(node, b=Call(divisor.dtype, CHECK_DIVISOR, (divisor, site, self.state_slot())))


def insert_runtime_checks(func: PrimFunc) -> PrimFunc:
    """Guard undecided accesses and divisors (see the module docstring); unchanged when none."""
    state = Buffer(CHECK_STATE, (IntImm(1),), "int64")
    inserter = _CheckInserter(state)
    body = inserter.visit(func.body)
    if not inserter.sites:
        return func
    state = Buffer(CHECK_STATE, (IntImm(2 * len(inserter.sites)),), "int64")
    body = substitute_buffers(body, {inserter.state: state})
    attrs = {**func.attrs, "check_sites": tuple(inserter.sites)}
    return replace(func, params=(*func.params, state), body=body, attrs=attrs)
