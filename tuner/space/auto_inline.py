"""Auto-inline: fold elementwise blocks into their neighbours before the other rules run.

MetaSchedule's AutoInline, in two halves. ``inline_producers`` runs first on the
whole function: every spatial block that writes an intermediate buffer (conv2d's
padding, softmax's exponentials, the links of an elementwise chain) is
``compute_inline``d into its readers where the primitive allows it, so the
reduction that reads it sees the original inputs and one kernel does the work of
several. ``inline_epilogues`` runs inside multi-level tiling, right after the
write cache is made: an elementwise consumer of the tiled block (a bias add, a
ReLU) is ``reverse_compute_inline``d into the write-back block, so it is computed
from registers as the tile is stored. Both act on structure only, never on sampled
values, so a trace replays with any decisions. Failed attempts leave the schedule
and its trace unchanged.
"""

from __future__ import annotations

from schedule import BlockRV, Schedule, ScheduleError

from .structure import is_spatial


def inline_producers(sch: Schedule, keep: frozenset[str] = frozenset()) -> None:
    """``compute_inline`` every spatial block whose output is an intermediate buffer, where legal,
    except the blocks named in ``keep`` (a GEMM's input copies, which its rule inlines later)."""
    params = set(sch.func.params)
    for name in sch.block_names():
        block = sch.find_block(name)
        if name in keep or not is_spatial(block) or any(w.buffer in params for w in block.writes):
            continue
        # Ask first, so that a refusal leaves no get_block behind in the trace.
        if not sch.can_apply("compute_inline", block=block):
            continue
        try:
            sch.compute_inline(sch.get_block(name))
        except ScheduleError:
            continue


def inline_epilogues(sch: Schedule, write_back: BlockRV) -> None:
    """``reverse_compute_inline`` the elementwise consumers of ``write_back`` into it, one after another."""
    while True:
        for consumer in sch.get_consumers(write_back):
            if not is_spatial(sch.get(consumer)):
                continue
            try:
                sch.reverse_compute_inline(consumer)
            except ScheduleError:
                continue
            break
        else:
            return
