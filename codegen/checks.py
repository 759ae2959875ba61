"""Checked builds at run time: the check state each call passes, and the error a failed check raises.

``build(mod, target, check_bounds=True)`` lowers with
``tir.transform.insert_runtime_checks``: every access the bounds prover could
not decide and every integer divisor not provably non-zero is checked in the
kernel, and a failure is recorded in ``tir_check_state`` (two int64 slots per
check site: failed flag, offending value) instead of touching memory outside a
buffer. The function's last parameter is that state; ``Module`` allocates it
zeroed for every call, passes it like any written buffer (so each runtime
launches as usual) and reads it back after the launch: the first failed site
raises ``BoundsCheckError`` or ``DivisionCheckError``, naming the kernel, the
buffer and the index, and the Python process goes on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tir.expr import Call, IntImm
from tir.functor import post_order_visit
from tir.stmt import Stmt
from tir.transform.insert_runtime_checks import CHECK_DIVISOR, CHECK_INDEX, CHECK_STATE

from .errors import BoundsCheckError, DivisionCheckError
from .program import BufferSpec, CompiledFunction


@dataclass(frozen=True)
class CheckSite:
    """One run-time check: where it is (kernel or C function) and what it guards."""

    kernel: str
    kind: str  # "index" or "divisor"
    buffer: str
    access: str  # the access (``A[idx[i]]``) or the division (``a // b``)
    dim: int
    extent: str


def check_sites(lowered_attrs: dict, bodies: Sequence[tuple[str, Stmt]]) -> tuple[CheckSite, ...]:
    """The sites of a checked function; ``bodies`` pairs each kernel's name with its body."""
    described = lowered_attrs.get("check_sites", ())
    owner = {}
    for name, body in bodies:

        def visit(node, name=name) -> None:
            if isinstance(node, Call) and node.op in (CHECK_INDEX, CHECK_DIVISOR):
                site = node.args[-2]
                if isinstance(site, IntImm):
                    owner.setdefault(site.value, name)

        post_order_visit(body, visit)
    return tuple(CheckSite(owner.get(i, "?"), *site) for i, site in enumerate(described))


def state_spec(sites: Sequence[CheckSite]) -> BufferSpec:
    """The parameter that carries the checks' results (always the function's last)."""
    return BufferSpec(CHECK_STATE, "int64", (2 * len(sites),), written=True)


def new_state(spec: CompiledFunction) -> np.ndarray:
    return np.zeros(spec.params[-1].shape, dtype=np.int64)


def raise_if_failed(spec: CompiledFunction, state: np.ndarray) -> None:
    """Raise for the first failed site recorded in ``state``, if any."""
    failed = np.flatnonzero(state[0::2])
    if not failed.size:
        return
    site = spec.checks[int(failed[0])]
    value = int(state[2 * failed[0] + 1])
    others = f" ({failed.size - 1} more check sites failed too)" if failed.size > 1 else ""
    if site.kind == "divisor":
        raise DivisionCheckError(
            f"kernel {site.kernel} of {spec.name}: integer division by zero in {site.access}{others}"
        )
    raise BoundsCheckError(
        f"kernel {site.kernel} of {spec.name}: index {value} of {site.access} is outside buffer "
        f"{site.buffer} (dimension {site.dim} has extent {site.extent}){others}; the access was skipped, "
        "so no memory outside the buffer was touched"
    )
