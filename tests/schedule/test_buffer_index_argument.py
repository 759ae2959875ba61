"""TVM's buffer-index argument, checked in one place (index_maps.access_region) for every primitive
that takes one: an index out of range is a BufferIndexError naming the argument and listing what the
block reads or writes; a non-int is an ArgumentError; the schedule stays unchanged."""

from __future__ import annotations

import pytest

from schedule import Schedule
from schedule.errors import ArgumentError
from schedule.index_maps import BufferIndexError

from .test_cache_read_write import elementwise
from .util import assert_fails_unchanged


def _calls(sch: Schedule, index):
    """Each primitive that takes a buffer index, called on block B with ``index`` for it."""
    block = sch.get_block("B")
    loop = sch.get_loops(block)[0]
    return {
        "cache_read": lambda: sch.cache_read(block, index, "shared"),
        "cache_write": lambda: sch.cache_write(block, index, "local"),
        "set_scope": lambda: sch.set_scope(block, index, "shared"),
        "storage_align": lambda: sch.storage_align(block, index, 0, 32, 1),
        "cache_inplace": lambda: sch.cache_inplace(block, index, "shared"),
        "unsafe_set_dtype": lambda: sch.unsafe_set_dtype(block, index, "float16"),
        "read_at": lambda: sch.read_at(loop, block, index, "shared"),
        "write_at": lambda: sch.write_at(loop, block, index, "shared"),
        "rolling_buffer": lambda: sch.rolling_buffer(block, index),
        "annotate_buffer_access": lambda: sch.annotate_buffer_access(
            block, index, "read", lambda i, j: (i, j)
        ),
        "set_axis_separator": lambda: sch.set_axis_separator(block, index, "write", [1]),
        "transform_layout": lambda: sch.transform_layout(block, ("read", index), lambda i, j: (j, i)),
        "reindex": lambda: sch.reindex(block, ("read", index)),
        "reindex_cache_read": lambda: sch.reindex_cache_read(block, index, "shared", lambda i, j: (i, j)),
    }


PRIMITIVES = sorted(_calls(Schedule(elementwise), 0))


@pytest.mark.parametrize("primitive", PRIMITIVES)
def test_an_index_out_of_range_is_one_error_listing_the_buffers(primitive):
    sch = Schedule(elementwise)
    err = assert_fails_unchanged(sch, BufferIndexError, "3 is out of range", _calls(sch, 3)[primitive])
    assert "block 'B'" in str(err) and "1 buffer(s): [0] " in str(err), str(err)


@pytest.mark.parametrize("primitive", PRIMITIVES)
def test_an_index_that_is_not_an_int_is_an_argument_error(primitive):
    sch = Schedule(elementwise)
    assert_fails_unchanged(sch, ArgumentError, "must be an int", _calls(sch, 0.5)[primitive])


@pytest.mark.parametrize("primitive", PRIMITIVES)
def test_a_name_no_buffer_of_the_block_has_is_a_buffer_index_error(primitive):
    # TVM takes a buffer's name for its index; an unknown name lists the buffers.
    sch = Schedule(elementwise)
    err = assert_fails_unchanged(sch, BufferIndexError, "no buffer of that name", _calls(sch, "Z")[primitive])
    assert "[0] " in str(err), str(err)
