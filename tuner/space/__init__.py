"""The tuner's design space: rules that turn a workload into sampled, mutable schedules.

``SpaceGenerator(target).sample(mod, seed)`` gives a ``Schedule`` whose trace is the
candidate (generator.py); the rules are auto-inline (auto_inline.py), multi-level
tiling for GPU and CPU (multi_level_tiling.py) and the elementwise and simple
reduction rules (elementwise.py), chosen per block by structure.py; limits.py checks
a candidate against the target's thread and memory limits and names the one broken.
"""

from __future__ import annotations

from .generator import SpaceGenerator
from .limits import SpaceError, check_limits

__all__ = ["SpaceError", "SpaceGenerator", "check_limits"]
