"""TVM's way of writing an instruction: ``Instruction(kind=InstructionKind.get("Split"), inputs, attrs,
outputs)``, translated to ours (a primitive's name and its arguments by name).

``InstructionKind.get`` takes TVM's names (``GetBlock``, ``Split``, ``RFactor``,
``SamplePerfectTile``...) and gives the registered primitive (``get_block``...). TVM splits a
call's arguments into ``inputs`` (handles and expressions, in order) and ``attrs`` (the plain
values, in order); ``arguments`` puts them back on the primitive's parameters: inputs fill the
handle parameters in signature order (a list parameter such as fuse's ``loops`` takes the rest),
inputs left over are split's ``factors`` or annotate's ``ann_val`` (TVM passes those as inputs),
and attrs fill the other parameters in signature order.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from typing import Any

from .instruction import PRIMITIVES

# TVM's instruction names that CamelCase -> snake_case does not give.
_TVM_NAMES = {"RFactor": "rfactor"}
# Where inputs left over after the handle parameters go, per primitive (TVM passes these as inputs).
_EXTRA_INPUTS = {"split": "factors", "annotate": "ann_val"}
# Parameters the replay machinery fills, never a trace's attrs.
_NOT_ATTRS = {"state", "rng", "decision"}


@dataclass(frozen=True)
class InstructionKind:
    """A primitive under TVM's instruction name."""

    name: str  # ours: "split"
    tvm_name: str  # TVM's: "Split"

    @staticmethod
    def get(name: str) -> InstructionKind:
        ours = _TVM_NAMES.get(name) or re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
        if ours not in PRIMITIVES:
            known = ", ".join(sorted(_camel(k) for k in PRIMITIVES))
            raise ValueError(f"no instruction kind {name!r}; the kinds are {known}")
        return InstructionKind(ours, name)

    @property
    def is_pure(self) -> bool:
        return self.name.startswith("get_") or self.name.startswith("sample_")


def _camel(name: str) -> str:
    return next((tvm for tvm, ours in _TVM_NAMES.items() if ours == name), None) or "".join(
        part.title() for part in name.split("_")
    )


def arguments(kind: str, inputs: list, attrs: list) -> tuple[dict[str, Any], bool]:
    """Our arguments by name for TVM's ``inputs`` and ``attrs``, and whether the outputs are a list."""
    prim = PRIMITIVES[kind]
    signature = inspect.signature(prim.fn)
    handle_names = [h.name for h in prim.handles]
    args: dict[str, Any] = {}
    remaining = list(inputs)
    for position, name in enumerate(handle_names):
        if not remaining:
            break
        is_list = "list[" in str(signature.parameters[name].annotation).split("|")[0]
        last_handle = position == len(handle_names) - 1
        if is_list and last_handle and kind not in _EXTRA_INPUTS:
            args[name], remaining = list(remaining), []
        else:
            args[name] = remaining.pop(0)
    if remaining:
        extra = _EXTRA_INPUTS.get(kind)
        if extra is None:
            raise ValueError(f"{_camel(kind)} takes {len(handle_names)} inputs, got {len(inputs)}")
        args[extra] = remaining if extra == "factors" else remaining[0]
    plain = [
        name
        for name in signature.parameters
        if name not in handle_names and name not in _NOT_ATTRS and name not in args
    ]
    if len(attrs) > len(plain):
        raise ValueError(
            f"{_camel(kind)} takes at most {len(plain)} attrs ({', '.join(plain)}), got {attrs!r}"
        )
    args.update(zip(plain, attrs))
    returns_list = "list" in str(signature.return_annotation) or kind == "sample_perfect_tile"
    return args, returns_list
