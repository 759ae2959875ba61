"""Traces: the record of every primitive a schedule applied, to print, save and replay.

An ``Instruction`` is one call: the primitive's name, its arguments (handles and
plain values), the handles it returned, and for sampling primitives the decision
it took. A ``Trace`` serializes to JSON (data only: replaying JSON never executes
code) and to Python text, and replays onto a fresh ``Schedule`` of the original
module, optionally with changed decisions and with optional instructions skipped
where they fail (what the tuner's mutators do: this is the one replay path).

JSON form::

    {"version": 1, "insts": [
        {"kind": "get_block", "args": {"name": "C", "func_name": "main"}, "outputs": ["b0"]},
        {"kind": "split", "args": {"loop": {"rv": "l1"}, "factors": [null, 128]},
         "outputs": ["l4", "l5"]}]}
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from .errors import ScheduleError
from .instruction import _RV, PRIMITIVES, BlockRV, ExprRV, LoopRV
from .tvm_trace import InstructionKind
from .tvm_trace import arguments as tvm_arguments

TRACE_VERSION = 1
_RV_TYPES = {"b": BlockRV, "l": LoopRV, "v": ExprRV}


@dataclass(frozen=True, init=False)
class Instruction:
    """One applied primitive. Also made TVM's way: ``Instruction(InstructionKind.get("Split"),
    inputs=[loop, None, 16], attrs=[True, False], outputs=[l0, l1])`` (schedule/tvm_trace.py)."""

    kind: str
    args: dict[str, Any]
    outputs: tuple[_RV, ...]
    decision: Any = None
    outputs_is_list: bool = False

    def __init__(
        self,
        kind: str | InstructionKind,
        args: dict[str, Any] | None = None,
        outputs=(),
        decision: Any = None,
        outputs_is_list: bool = False,
        *,
        inputs: list | None = None,
        attrs: list | None = None,
    ):
        if isinstance(kind, InstructionKind) or inputs is not None or attrs is not None:
            name = kind.name if isinstance(kind, InstructionKind) else InstructionKind.get(kind).name
            args, outputs_is_list = tvm_arguments(name, list(inputs or []), list(attrs or []))
            kind = name
        for key, value in (
            ("kind", kind),
            ("args", dict(args or {})),
            ("outputs", tuple(outputs)),
            ("decision", decision),
            ("outputs_is_list", outputs_is_list),
        ):
            object.__setattr__(self, key, value)

    def __hash__(self) -> int:  # by identity, so TVM's decisions {instruction: value} work
        return id(self)


class IntDecision(int):
    """An integer decision as TVM hands it out (an Integer: ``.value`` is the int)."""

    @property
    def value(self) -> int:
        return int(self)


class Decisions(dict):
    """Instruction index -> decision, for every sampling instruction. TVM's key, the instruction
    itself (``trace.decisions[trace.insts[-1]]``), finds the same entry."""

    def __init__(self, insts: list[Instruction]):
        super().__init__((i, inst.decision) for i, inst in enumerate(insts) if PRIMITIVES[inst.kind].sampling)
        self._positions = {id(inst): i for i, inst in enumerate(insts)}

    def __getitem__(self, key):
        if isinstance(key, Instruction):
            decision = super().__getitem__(self._positions.get(id(key), key))
            # TVM's decisions are Integer objects: `trace.decisions[inst].value` reads one.
            return IntDecision(decision) if type(decision) is int else decision
        return super().__getitem__(key)

    def __contains__(self, key) -> bool:
        if isinstance(key, Instruction):
            key = self._positions.get(id(key), key)
        return super().__contains__(key)

    def get(self, key, default=None):
        return self[key] if key in self else default  # noqa: SIM401 - dict.get skips the lookup above


@dataclass(init=False)
class Trace:
    """The instructions a schedule applied. ``Trace(insts, decisions)`` also takes TVM's
    ``decisions`` (instruction -> decision); the ``decisions`` property maps indices (ours) and
    instructions (TVM's) to decisions."""

    insts: list[Instruction] = field(default_factory=list)

    def __init__(self, insts: list[Instruction] | None = None, decisions: dict | None = None):
        decided = decisions or {}
        self.insts = [
            replace(inst, decision=decided[inst]) if inst in decided else inst for inst in insts or []
        ]

    def append(self, inst: Instruction) -> None:
        self.insts.append(inst)

    def pop(self) -> Instruction | None:
        """Remove the last instruction and return it (None when the trace is empty), as TVM's."""
        return self.insts.pop() if self.insts else None

    def copy(self) -> Trace:
        return Trace(list(self.insts))

    def __len__(self) -> int:
        return len(self.insts)

    # ------------------------------------------------------------ decisions

    @property
    def decisions(self) -> Decisions:
        """Instruction index -> decision, for every sampling instruction (an instruction of the
        trace is also a key, as in TVM)."""
        return Decisions(self.insts)

    def get_decision(self, inst: Instruction) -> Any:
        """The decision of a sampling instruction of this trace; None for any other instruction."""
        return self.decisions.get(inst)

    def with_decision(self, index: int, decision: Any) -> Trace:
        """A copy whose instruction ``index`` replays with ``decision``."""
        insts = list(self.insts)
        insts[index] = replace(insts[index], decision=decision)
        return Trace(insts)

    # ------------------------------------------------------------ naming

    def _names(self) -> dict[_RV, str]:
        names: dict[_RV, str] = {}
        for inst in self.insts:
            for rv in inst.outputs:
                names.setdefault(rv, f"{rv.prefix}{len(names)}")
        return names

    # ------------------------------------------------------------ JSON

    def as_json(self) -> dict:
        names = self._names()
        insts = []
        for inst in self.insts:
            entry = {
                "kind": inst.kind,
                "args": {k: _encode(v, names) for k, v in inst.args.items()},
                "outputs": [names[rv] for rv in inst.outputs],
            }
            if inst.outputs_is_list:
                entry["outputs_is_list"] = True
            if PRIMITIVES[inst.kind].sampling:
                entry["decision"] = inst.decision
            insts.append(entry)
        return {"version": TRACE_VERSION, "insts": insts}

    def as_json_str(self) -> str:
        return json.dumps(self.as_json(), separators=(",", ":"))

    @staticmethod
    def from_json(obj: dict | str) -> Trace:
        """Read a trace from its JSON form; names and kinds are checked, nothing is executed."""
        if isinstance(obj, str):
            obj = json.loads(obj)
        if not isinstance(obj, dict) or obj.get("version") != TRACE_VERSION:
            version = obj.get("version") if isinstance(obj, dict) else None
            raise ValueError(f"not a trace of version {TRACE_VERSION} (got version {version!r})")
        rvs: dict[str, _RV] = {}
        insts = []
        for number, entry in enumerate(obj["insts"]):
            kind = entry["kind"]
            if kind not in PRIMITIVES:
                raise ValueError(f"trace instruction {number} has unknown kind {kind!r}")
            args = {k: _decode(v, rvs, number) for k, v in entry["args"].items()}
            outputs = []
            for name in entry["outputs"]:
                rv_type = _RV_TYPES.get(name[:1])
                if rv_type is None:
                    raise ValueError(f"trace instruction {number}: bad output name {name!r}")
                rvs[name] = rv_type()
                outputs.append(rvs[name])
            insts.append(
                Instruction(
                    kind,
                    args,
                    tuple(outputs),
                    entry.get("decision"),
                    bool(entry.get("outputs_is_list", False)),
                )
            )
        return Trace(insts)

    # ------------------------------------------------------------ Python

    def as_python(self) -> str:
        """The trace as Python lines calling ``sch`` (what a user would have typed)."""
        names = self._names()
        lines = []
        for inst in self.insts:
            varargs = PRIMITIVES[inst.kind].varargs
            args = ", ".join(
                _python(v, names)[1:-1] if k == varargs else f"{k}={_python_arg(k, v, names)}"
                for k, v in inst.args.items()
            )
            if PRIMITIVES[inst.kind].sampling:
                args += f", decision={inst.decision!r}"
            call = f"sch.{inst.kind}({args})"
            outs = [names[rv] for rv in inst.outputs]
            if not outs and not inst.outputs_is_list:
                lines.append(call)
            elif inst.outputs_is_list:
                lines.append(f"{', '.join(outs)}{',' if len(outs) == 1 else ''} = {call}" if outs else call)
            else:
                lines.append(f"{outs[0]} = {call}")
        if any("T." in line for line in lines):  # an index map's text names T.int64(...): self-contained
            lines.insert(0, "from tir import T")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.as_python()

    # ------------------------------------------------------------ replay

    def apply_to_schedule(
        self,
        sch,
        decisions: dict[int, Any] | None = None,
        optional: frozenset[str] = frozenset(),
        start: int = 0,
        *,
        remove_postproc: bool = False,
        decision_provider: Callable | None = None,
    ) -> None:
        """Replay every instruction on ``sch`` (a Schedule of the original module).

        ``decisions`` (instruction index -> decision) replaces the recorded decisions of those
        sampling instructions. An instruction whose kind is in ``optional`` (the tuner passes
        ``{"vectorize"}``, which only makes a loop faster) is skipped when it fails on ``sch``,
        so ``sch.trace`` records only what applied; any other failure raises ``ScheduleError``,
        as does a trace made for another program (a handle used before an instruction made it,
        arguments the primitive does not take, a different number of handles returned).
        ``start`` replays from that instruction on, onto ``sch`` from ``Schedule.replay_prefix``
        (the instructions before it already applied, with this trace's own handles).
        TVM's keywords: ``remove_postproc`` has nothing to remove (the schedule records no
        postprocessing instructions); ``decision_provider(inst, inputs, attrs, decision)`` returns
        the decision a sampling instruction replays with (inputs: its handle arguments).
        """
        decisions = decisions or {}
        rv_map: dict[_RV, Any] = {rv: rv for inst in self.insts[:start] for rv in inst.outputs}
        for number, inst in enumerate(self.insts[start:], start):
            prim = PRIMITIVES[inst.kind]
            args = {k: _map_rvs(v, rv_map, number) for k, v in inst.args.items()}
            if prim.sampling:
                args["decision"] = decisions.get(number, inst.decision)
                if decision_provider is not None:
                    inputs = [v for v in args.values() if isinstance(v, _RV)]
                    args["decision"] = decision_provider(inst, inputs, [], args["decision"])
            positional = args.pop(prim.varargs) if prim.varargs else []
            try:
                result = getattr(sch, inst.kind)(*positional, **args)
            except ScheduleError:
                if inst.kind in optional:
                    continue
                raise
            except TypeError as err:  # arguments that the primitive does not take: not our trace
                raise ScheduleError(
                    f"trace instruction {number} ({inst.kind}) does not replay: {err}"
                ) from err
            results = list(result) if inst.outputs_is_list else ([result] if inst.outputs else [])
            if len(results) != len(inst.outputs):
                raise ScheduleError(
                    f"trace instruction {number} ({inst.kind}) gave {len(results)} handles on this module, "
                    f"where the trace has {len(inst.outputs)}: the trace was made for another program"
                )
            rv_map.update(zip(inst.outputs, results))

    @staticmethod
    def apply_json_to_schedule(json_obj: dict | str, sch) -> None:
        Trace.from_json(json_obj).apply_to_schedule(sch)


def _encode(value, names: dict[_RV, str]):
    if isinstance(value, _RV):
        return {"rv": names[value]}
    if isinstance(value, (list, tuple)):
        return [_encode(v, names) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"dict": {k: _encode(v, names) for k, v in value.items()}}  # {"rv": ...} is a handle
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"cannot store {value!r} in a trace")


def _decode(value, rvs: dict[str, _RV], number: int):
    if isinstance(value, dict) and "dict" in value:
        return {k: _decode(v, rvs, number) for k, v in value["dict"].items()}
    if isinstance(value, dict):
        name = value.get("rv")
        if name not in rvs:
            raise ValueError(f"trace instruction {number} uses {name!r} before it is defined")
        return rvs[name]
    if isinstance(value, list):
        return [_decode(v, rvs, number) for v in value]
    return value


def _python(value, names: dict[_RV, str]) -> str:
    if isinstance(value, _RV):
        return names[value]
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_python(v, names) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_python(v, names)}" for k, v in value.items()) + "}"
    return repr(value)


def _python_arg(key: str, value, names: dict[_RV, str]) -> str:
    """An index map (stored as its lambda's text) prints as the lambda itself, as TVM's traces do."""
    if key == "index_map" and isinstance(value, str) and value.startswith("lambda "):
        return value
    return _python(value, names)


def _map_rvs(value, rv_map: dict[_RV, Any], number: int):
    if isinstance(value, _RV):
        if value not in rv_map:
            raise ScheduleError(f"trace instruction {number} uses a handle before an instruction made it")
        return rv_map[value]
    if isinstance(value, (list, tuple)):
        return [_map_rvs(v, rv_map, number) for v in value]
    if isinstance(value, dict):
        return {k: _map_rvs(v, rv_map, number) for k, v in value.items()}
    return value
