"""schedule: transform TensorIR programs with TVM's primitives, recorded as traces.

from schedule import Schedule
sch = Schedule(MyModule)
i, j, k = sch.get_loops(sch.get_block("C"))
i0, i1 = sch.split(i, [None, 16])
sch.bind(i0, "blockIdx.x")
"""

from .errors import ScheduleError, StaleHandleError, UnknownHandleError
from .instruction import BlockRV, ExprRV, LoopRV
from .sampling import draw_perfect_tile
from .schedule import Schedule
from .sref import BlockScope, Dependency, DepKind, StmtSRef
from .state import ScheduleState
from .trace import Instruction, Trace
from .tvm_trace import InstructionKind

__all__ = [
    "Schedule",
    "ScheduleError",
    "StaleHandleError",
    "UnknownHandleError",
    "Trace",
    "Instruction",
    "InstructionKind",
    "ScheduleState",
    "StmtSRef",
    "BlockScope",
    "Dependency",
    "DepKind",
    "BlockRV",
    "LoopRV",
    "ExprRV",
    "draw_perfect_tile",
]
