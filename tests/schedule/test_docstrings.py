"""The examples in the schedule primitives' docstrings run as doctests (before -> after scripts)."""

from __future__ import annotations

import doctest
import importlib

import pytest

import tir
from schedule import Schedule

MODULES = [
    "schedule.get",
    "schedule.loop_transformation",
    "schedule.for_kind",
    "schedule.annotate",
    "schedule.compute_inline",
    "schedule.reduction",
    "schedule.sampling",
    "schedule.cache_read_write",
    "schedule.compute_at",
    "schedule.blockize",
    "schedule.tensorize",
    "schedule.layout_transformation",
    "schedule.reindex",
    "schedule.cache_inplace",
    "schedule.cache_index",
    "schedule.loop_partition",
    "schedule.decompose_padding",
    "schedule.pad_einsum",
    "schedule.block_iters",
    "schedule.set_dtype",
    "schedule.buffer_access",
    "schedule.hide_buffer_access",
    "schedule.axis_separator",
    "schedule.rolling_buffer",
    "schedule.read_write_at",
    "schedule.merge",
    "schedule.fuse_epilogue",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(
        module,
        extraglobs={"tir": tir, "Schedule": Schedule},
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
        report=True,
    )
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0, f"{result.failed} docstring example(s) of {name} failed (output above)"
