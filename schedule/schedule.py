"""``Schedule``: the mutable handle users transform programs with.

The class itself only owns the state, the handles and the trace, and runs every
primitive through one path (``_run``): resolve handles to nodes, call the
primitive, and either commit the new module and record the instruction, or
restore everything and raise the error rendered against the script. The public
primitive methods and their docstrings live in the family files
(``get.py``, ``loop_transformation.py``, ...) as mixins, next to the code they
document.
"""

from __future__ import annotations

import random
from dataclasses import replace as dc_replace
from typing import Any

from tir import Block, For, IRModule, IterVar, PrimFunc
from tir.analysis.well_formed import verify_well_formed

from .analysis import can_apply, child_blocks, loop_iters
from .annotate import AnnotateMethods
from .axis_separator import AxisSeparatorMethods
from .block_iters import BlockIterMethods
from .blockize import BlockizeMethods
from .buffer_access import BufferAccessMethods
from .cache_index import CacheIndexMethods
from .cache_inplace import CacheInplaceMethods
from .cache_read_write import CacheReadWriteMethods
from .compute_at import ComputeAtMethods
from .compute_inline import ComputeInlineMethods
from .decompose_padding import DecomposePaddingMethods
from .errors import (
    ERROR_RENDER_LEVELS,
    FORGOTTEN_BY_REMOVE_RV,
    ArgumentError,
    NotFoundError,
    ScheduleError,
    StaleHandleError,
    UnknownHandleError,
)
from .for_kind import ForKindMethods
from .fuse_epilogue import FuseEpilogueMethods
from .get import GetMethods
from .hide_buffer_access import HideBufferAccessMethods
from .instruction import _RV, PRIMITIVES, BlockRV, ExprRV, LoopRV, Sampled
from .layout_transformation import LayoutTransformationMethods
from .loop_partition import LoopPartitionMethods
from .loop_transformation import LoopTransformationMethods
from .merge import MergeMethods
from .pad_einsum import PadEinsumMethods
from .read_write_at import ReadWriteAtMethods
from .reduction import ReductionMethods
from .reindex import ReindexMethods
from .rolling_buffer import RollingBufferMethods
from .sampling import SamplingMethods
from .set_dtype import SetDtypeMethods
from .state import ScheduleState
from .tensorize import TensorizeMethods
from .trace import Instruction, Trace


class Schedule(
    GetMethods,
    LoopTransformationMethods,
    ForKindMethods,
    CacheReadWriteMethods,
    ComputeAtMethods,
    ComputeInlineMethods,
    ReductionMethods,
    AnnotateMethods,
    SamplingMethods,
    BlockizeMethods,
    TensorizeMethods,
    LayoutTransformationMethods,
    ReindexMethods,
    CacheInplaceMethods,
    CacheIndexMethods,
    LoopPartitionMethods,
    DecomposePaddingMethods,
    PadEinsumMethods,
    BlockIterMethods,
    SetDtypeMethods,
    RollingBufferMethods,
    ReadWriteAtMethods,
    MergeMethods,
    FuseEpilogueMethods,
    BufferAccessMethods,
    HideBufferAccessMethods,
    AxisSeparatorMethods,
):
    """A schedule of an IRModule (or a PrimFunc, wrapped as ``main``).

    >>> sch = Schedule(MyModule)               # doctest: +SKIP
    >>> block = sch.get_block("C")             # doctest: +SKIP
    >>> i, j, k = sch.get_loops(block)         # doctest: +SKIP
    """

    def __init__(
        self,
        mod: IRModule | PrimFunc,
        seed: int | None = None,
        func_name: str | None = None,
        error_render_level: str = "detail",
    ):
        if error_render_level not in ERROR_RENDER_LEVELS:
            raise ValueError(
                f"error_render_level must be one of {', '.join(ERROR_RENDER_LEVELS)}, "
                f"got {error_render_level!r}"
            )
        # How much a ScheduleError says: "detail" (reason and marked script), "fast" (one line), "none".
        self._error_render_level = error_render_level
        self._origin = mod  # what the schedule was made from, as given (replay_prefix checks it)
        if isinstance(mod, PrimFunc):
            mod = IRModule({"main": dc_replace(mod, name="main")})
        if not isinstance(mod, IRModule):
            raise TypeError(
                f"Schedule needs an IRModule or a PrimFunc (from @I.ir_module or @T.prim_func), "
                f"got {type(mod).__name__}"
            )
        # Several functions and none called "main": as TVM, the schedule is made, and waits for
        # work_on (or get_block(..., func_name=)) to say which function it works on.
        self._func_chosen = func_name is not None or "main" in mod.functions or len(mod.functions) == 1
        if func_name is None:
            func_name = mod.main_name() if self._func_chosen else next(iter(mod.functions))
        verify_well_formed(mod, show_script=True)
        self.state = ScheduleState(mod, func_name)
        self.trace = Trace()
        self._keys: dict[_RV, Any] = {}
        self._removed: dict[_RV, str] = {}
        self._rng = random.Random(seed)
        # Trace position -> a copy of the schedule before that (sampling) instruction: a replay
        # with a changed decision starts there (replay_prefix), not from the beginning.
        self._checkpoints: dict[int, Schedule] = {}

    # ------------------------------------------------------------ state

    @property
    def mod(self) -> IRModule:
        """The current module (immutable; every primitive makes a new one)."""
        return self.state.mod

    @property
    def func(self) -> PrimFunc:
        return self.state.func

    def show(self, style: str | None = None, loops_only: bool = False) -> None:
        """Print the current module; ``loops_only=True``: its loop nest only, as Halide's print_loop_nest."""
        self.state.mod.show(style=style, loops_only=loops_only)

    def _repr_html_(self) -> str:
        return self.state.mod._repr_html_()

    def work_on(self, func_name: str) -> None:
        """Make ``func_name`` the function later primitives apply to."""
        self.state.mod[func_name]  # raises a clear KeyError
        self.state.func_name = func_name
        self._func_chosen = True

    @property
    def func_working_on(self) -> str | None:
        """TVM's name: the function primitives apply to (None until one is chosen)."""
        return self.state.func_name if self._func_chosen else None

    def _check_func_chosen(self, kind: str, args: dict) -> None:
        if self._func_chosen or (kind == "get_block" and args.get("func_name")):
            self._func_chosen = True
            return
        raise ValueError(
            f"the schedule does not know which function to be working on: the module has functions "
            f"{', '.join(self.state.mod.functions)} and none is called 'main'. Call "
            "sch.work_on(name) first, or pass get_block(..., func_name=name)"
        )

    def copy(self) -> Schedule:
        """An independent schedule with the same module, handles, trace and random state."""
        other = Schedule.__new__(Schedule)
        other.state = ScheduleState(self.state.mod, self.state.func_name)
        other.trace = self.trace.copy()
        other._keys = dict(self._keys)
        other._removed = dict(self._removed)
        other._rng = random.Random()
        other._rng.setstate(self._rng.getstate())
        other._origin = self._origin
        other._error_render_level = self._error_render_level
        other._checkpoints = dict(self._checkpoints)
        other._func_chosen = self._func_chosen
        return other

    def replay_prefix(self, mod: IRModule | PrimFunc, position: int) -> Schedule | None:
        """A schedule of ``mod`` with the first ``position`` instructions of this schedule's trace
        applied, copied from the checkpoint this schedule kept before instruction ``position``
        (it keeps one before each sampling instruction) instead of replayed; None when it kept
        none there or was not made from ``mod`` itself. The copy uses this trace's own handles,
        so the rest of the trace replays onto it (``Trace.apply_to_schedule(..., start=position)``):
        what the tuner does for a candidate that differs from this one in decision ``position``.

        >>> sch = Schedule(MyModule)                                  # doctest: +SKIP
        >>> i, j, k = sch.get_loops(sch.get_block("C"))               # doctest: +SKIP
        >>> factors = sch.sample_perfect_tile(i, n=2)                 # doctest: +SKIP
        >>> prefix = sch.replay_prefix(MyModule, 2)                   # doctest: +SKIP
        >>> len(prefix.trace), prefix.get(i) is sch.get(i)            # doctest: +SKIP
        (2, True)
        """
        checkpoint = self._checkpoints.get(position)
        if checkpoint is None or mod is not self._origin:
            return None
        return checkpoint.copy()

    def seed(self, seed: int) -> None:
        self._rng.seed(seed)

    def fork_seed(self) -> int:
        return self._rng.randrange(1 << 31)

    def get(self, rv):
        """The node or value behind a handle: a For, a Block, or an int."""
        return self._resolve(rv)

    def get_sref(self, rv_or_stmt):
        """TVM's ``get_sref``: the StmtSRef (``.stmt``, ``.parent``) of a handle's loop or block, or of
        a For/Block of the current function; it follows its node across later primitives.

        >>> sch = Schedule(MyModule)                               # doctest: +SKIP
        >>> sref = sch.get_sref(sch.get_block("C"))                # doctest: +SKIP
        >>> sref.stmt.name, type(sref.parent.stmt).__name__        # doctest: +SKIP
        ('C', 'For')
        """
        node = self._resolve(rv_or_stmt) if isinstance(rv_or_stmt, (BlockRV, LoopRV)) else rv_or_stmt
        return self.state.get_sref(node)

    # ------------------------------------------------------------ queries (nothing recorded)

    def find_block(self, name: str) -> Block | None:
        """The block named ``name`` in the function worked on, or None. Unlike ``get_block`` it
        makes no handle and records nothing: for a rule that looks before it decides.

        >>> sch = Schedule(MyModule)                         # doctest: +SKIP
        >>> sch.find_block("C").name, sch.find_block("D")   # doctest: +SKIP
        ('C', None)
        """
        return self.state.index.blocks.get(name)

    def block_names(self, scope: str | None = "root") -> list[str]:
        """Names of the blocks directly inside block ``scope``, in program order (``scope=None``:
        every block of the function worked on, the root included); records nothing.

        >>> Schedule(MyModule).block_names()                # doctest: +SKIP
        ['B', 'C']
        """
        index = self.state.index
        if scope is None:
            return list(index.blocks)
        if scope not in index.blocks:
            raise NotFoundError(f"no block named {scope!r} in function {self.state.func_name!r}")
        return [b.name for b in child_blocks(index.blocks[scope])]

    def loop_iters(self, block: BlockRV | Block) -> list[IterVar] | None:
        """The block iterator each loop around ``block`` drives, outermost first, or None when the
        loops are not one plain serial loop from 0 per iterator (a fused or split loop, an iterator
        bound to an expression, a predicate); records nothing.

        >>> [iv.var.name for iv in sch.loop_iters(sch.get_block("C"))]   # doctest: +SKIP
        ['vi', 'vj', 'vk']
        """
        return loop_iters(self.state, self._resolve(block))

    def can_apply(self, kind: str, **args) -> bool:
        """Whether primitive ``kind`` would apply to ``args`` (handles or nodes) now; changes and
        records nothing. A primitive with a cheaper legality check (compute_inline) is asked
        that, any other is tried on a scratch copy.

        >>> sch.can_apply("compute_inline", block=sch.find_block("B"))   # doctest: +SKIP
        True
        """
        if kind not in PRIMITIVES:
            raise NotFoundError(f"there is no primitive {kind!r}; known: {', '.join(sorted(PRIMITIVES))}")
        return can_apply(self.state, kind, **{k: self._resolve(v) for k, v in args.items()})

    def __repr__(self) -> str:
        return f"Schedule({self.state.func_name}, {len(self.trace)} instructions)"

    # ------------------------------------------------------------ handles

    def _resolve(self, value):
        if isinstance(value, _RV):
            return self._resolve_rv(value)
        if isinstance(value, (list, tuple)):
            return [self._resolve(v) for v in value]
        return value

    def _resolve_rv(self, rv: _RV):
        if rv not in self._keys:
            if rv in self._removed:
                message = self._removed[rv]
                raise (UnknownHandleError if message == FORGOTTEN_BY_REMOVE_RV else StaleHandleError)(message)
            raise UnknownHandleError(f"{rv!r} does not belong to this schedule")
        key = self._keys[rv]
        if isinstance(rv, ExprRV):
            return key
        index = self.state.index
        node = index.loops.get(key) if isinstance(rv, LoopRV) else index.blocks.get(key[1])
        if isinstance(rv, BlockRV) and index.name_counts.get(key[1], 0) > 1:
            raise NotFoundError(
                f"the handle refers to block {key[1]!r}, and the function now has "
                f"{index.name_counts[key[1]]} blocks with the name: handles need unique block names"
            )
        if node is None or (isinstance(rv, BlockRV) and key[0] != self.state.func_name):
            what = f"loop {key.name}" if isinstance(rv, LoopRV) else f"block {key[1]!r}"
            raise StaleHandleError(f"the handle refers to {what}, which no longer exists")
        return node

    def _make_rv(self, node) -> _RV:
        if isinstance(node, For):
            rv = LoopRV()
            self._keys[rv] = node.loop_var
        elif isinstance(node, Block):
            rv = BlockRV()
            self._keys[rv] = (self.state.func_name, node.name)
        elif isinstance(node, int):
            rv = ExprRV()
            self._keys[rv] = node
        else:
            raise TypeError(f"a primitive returned {type(node).__name__}, which has no handle type")
        return rv

    def _note_removed(self, primitive: str) -> None:
        """Remember which primitive removed the loops and blocks that vanished, for later errors."""
        index = self.state.index
        for rv, key in list(self._keys.items()):
            if isinstance(rv, LoopRV) and key not in index.loops:
                self._removed[rv] = (
                    f"the handle refers to loop {key.name}, which {primitive} removed; "
                    "use the handles that primitive returned instead"
                )
                del self._keys[rv]
            elif isinstance(rv, BlockRV) and key[0] == self.state.func_name and key[1] not in index.blocks:
                self._removed[rv] = f"the handle refers to block {key[1]!r}, which {primitive} removed"
                del self._keys[rv]

    # ------------------------------------------------------------ the one path

    def _run(self, kind: str, **args):
        """Apply primitive ``kind`` with ``args`` (handles allowed), record it, return handles."""
        prim = PRIMITIVES[kind]
        self._check_func_chosen(kind, args)
        saved_mod = self.state.mod
        # Only a sampling primitive draws from the generator, so only it needs the state kept.
        saved_rng = self._rng.getstate() if prim.sampling else None
        args = self._blocks_by_name(prim, args)
        if prim.sampling:  # after the lookups it records: the checkpoint is just before this instruction
            self._checkpoints[len(self.trace)] = self.copy()
        try:
            resolved = {k: self._resolve(v) for k, v in args.items()}
            prim.check_handles(resolved)
            if prim.sampling:
                resolved["rng"] = self._rng
            result = prim.fn(self.state, **resolved)
        except ScheduleError as err:
            self.state.mod = saved_mod
            if saved_rng is not None:
                self._rng.setstate(saved_rng)
            err.render(saved_mod, kind, self._error_render_level)
            raise
        except Exception as exc:
            self.state.mod = saved_mod
            if saved_rng is not None:
                self._rng.setstate(saved_rng)
            err = ScheduleError(f"internal error ({type(exc).__name__}: {exc}); please report it")
            err.render(saved_mod, kind, self._error_render_level)
            raise err from exc
        decision = None
        if isinstance(result, Sampled):
            result, decision = result.outputs, result.decision
        is_list = isinstance(result, (list, tuple))
        outputs = (
            [self._make_rv(n) for n in result]
            if is_list
            else ([] if result is None else [self._make_rv(result)])
        )
        if self.state.mod is not saved_mod:
            self._note_removed(kind)
        recorded = {k: v for k, v in args.items() if not (prim.sampling and k == "decision")}
        self.trace.append(Instruction(kind, recorded, tuple(outputs), decision, is_list))
        if is_list:
            return outputs
        return outputs[0] if outputs else None

    def _blocks_by_name(self, prim, args: dict) -> dict:
        """TVM takes a block's name wherever it takes a block handle: look names up with get_block
        (which records the lookup in the trace, as TVM's does)."""
        for param in prim.handles:
            value = args.get(param.name)
            if Block not in param.types:
                continue
            if isinstance(value, str):
                args = {**args, param.name: self.get_block(value)}
            elif isinstance(value, (list, tuple)) and any(isinstance(v, str) for v in value):
                args = {**args, param.name: [self.get_block(v) if isinstance(v, str) else v for v in value]}
        return args

    @staticmethod
    def _check(condition: bool, message: str, *nodes) -> None:
        if not condition:
            raise ArgumentError(message, *nodes)
