"""The Metal host simulator: compiles our MSL as C++ with g++ and runs it on host threads (Linux, CI).

``load(source, functions, target)`` is the runtime interface that ``build(mod, "metal",
device="sim")`` uses; see ``simulator.py``.
"""

from __future__ import annotations

from codegen.metal.sim.simulator import SimulatedModule, SimulatorError, load

__all__ = ["SimulatedModule", "SimulatorError", "load"]
