"""Hand schedules with cross-thread reductions, shared by the tests, the golden sources and the benchmark.

``cross_thread_softmax``: each row one thread block; its max and sum reduced by the
block's threads into shared memory (MetaSchedule's CrossThreadReduction, by hand),
then the divide on the same threads; ``cross_thread_layer_norm`` the same for the
row sum and the row sum of squares. ``cross_thread_row_sum``: each row one block,
its sum split over the block's threads. ``softmax_row_in_shared``: the softmax
schedule with the row read from global memory once, as float4s, into a shared copy
that the max, the sum and the divide read (instead of three global passes).
"""

from __future__ import annotations

from schedule import Schedule
from tuner import workloads


def cross_thread_softmax(threads: int = 128, rows: int = 6, cols: int = 200) -> Schedule:
    """softmax(rows, cols) with the row max and row sum reduced by ``threads`` threads per row."""
    return rows_with_reductions(workloads.softmax(rows, cols), "B", ("A_sum", "A_max"), threads)


def cross_thread_layer_norm(threads: int = 128, rows: int = 6, cols: int = 200) -> Schedule:
    """layer_norm(rows, cols) with the row sum and sum of squares reduced by ``threads`` threads per row."""
    return rows_with_reductions(workloads.layer_norm(rows, cols), "Y", ("X_sq_sum", "X_sum"), threads)


def softmax_row_in_shared(threads: int = 128, rows: int = 6, cols: int = 200, lanes: int = 4) -> Schedule:
    """``cross_thread_softmax`` reading its row once (``lanes`` per thread per load) into shared memory."""
    sch = cross_thread_softmax(threads, rows, cols)
    row = sch.get_loops(sch.get_block("B"))[0]
    readers = [sch.get_block(name) for name in ("A_max", "A_sum", "B")]
    copy = sch.cache_read(readers[0], 0, "shared", consumer_blocks=readers)
    sch.compute_at(copy, row)
    _, thread_x, vector = sch.split(sch.get_loops(copy)[-1], [None, threads, lanes])
    sch.bind(thread_x, "threadIdx.x")
    if lanes > 1:
        sch.vectorize(vector)
    return sch


def rows_with_reductions(mod, output: str, reductions: tuple[str, ...], threads: int) -> Schedule:
    """The output's rows on blockIdx.x, its columns and each reduction (computed per row, in shared
    memory) split over ``threads`` threads."""
    sch = Schedule(mod)
    i, j = sch.get_loops(sch.get_block(output))
    sch.bind(i, "blockIdx.x")
    _, j1 = sch.split(j, [None, threads])
    sch.bind(j1, "threadIdx.x")
    for name in reductions:
        block = sch.get_block(name)
        sch.compute_at(block, i)
        _, k1 = sch.split(sch.get_loops(block)[-1], [None, threads])
        sch.bind(k1, "threadIdx.x")
        sch.set_scope(block, 0, "shared")
    return sch


def cross_thread_row_sum(threads: int = 128, rows: int = 8, cols: int = 200) -> Schedule:
    """reduction_sum(rows, cols) with each row's sum split over ``threads`` threads."""
    sch = Schedule(workloads.reduction_sum(rows, cols))
    i, k = sch.get_loops(sch.get_block("B"))
    sch.bind(i, "blockIdx.x")
    _, k1 = sch.split(k, [None, threads])
    sch.bind(k1, "threadIdx.x")
    return sch
