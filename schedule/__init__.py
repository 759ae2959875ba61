"""schedule: transform TensorIR programs with TVM's primitives, recorded as traces.

from schedule import Schedule
sch = Schedule(MyModule)
i, j, k = sch.get_loops(sch.get_block("C"))
i0, i1 = sch.split(i, [None, 16])
sch.bind(i0, "blockIdx.x")
"""

from .errors import ScheduleError, StaleHandleError
from .instruction import BlockRV, ExprRV, LoopRV
from .sampling import draw_perfect_tile
from .schedule import Schedule
from .trace import Instruction, Trace

__all__ = [
    "Schedule",
    "ScheduleError",
    "StaleHandleError",
    "Trace",
    "Instruction",
    "BlockRV",
    "LoopRV",
    "ExprRV",
    "draw_perfect_tile",
]
