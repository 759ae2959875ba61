"""Feature vectors of many candidates at once, in forked worker processes where cores are spare.

The search (tuner/search.py) lowers every candidate it proposes for its feature
vector (about 13 ms of the 20-25 ms a CUDA matmul candidate costs the search);
a vector is a pure function of the scheduled module, the target and the FLOPs, so
the vectors of a group of candidates can be computed anywhere, in any order, and
come out the same. :class:`FeaturePool` hands a group to ``workers`` child
processes (forked, so they start with the tuner's modules; each leads its own
process group and dies with the tuner, as the build workers do:
tuner/measure/processes.py), a slice each, and computes its own share meanwhile.
Sending a module costs about 1 ms of pickling against the 13 ms of lowering.
With one worker, on a machine without fork (macOS), or for a group of one, the
vectors are computed here. A worker that dies (or cannot be reached) costs
nothing but time: its slice is computed here and the worker is not used again.
"""

from __future__ import annotations

import os
import pickle
import sys
from collections.abc import Sequence
from contextlib import suppress
from multiprocessing.connection import Connection

import numpy as np

from codegen.target import Target
from tir import IRModule

from .features import FEATURE_LENGTH, extract_features
from .measure.local_runner import LocalRunner
from .measure.processes import Child

# At most this many feature workers: a batch proposes about 100 candidates, and the build
# workers and the runner need cores of their own meanwhile.
MAX_WORKERS = 8


def default_workers(runner: object) -> int:
    """Half the cores, at most MAX_WORKERS; 1 (no worker processes) on a machine of 2 or 3 cores,
    and beside any runner but the local one (a Ray driver's threads are not ones to fork)."""
    if not isinstance(runner, LocalRunner):
        return 1
    return max(1, min(MAX_WORKERS, (os.cpu_count() or 1) // 2))


def check_search_workers(search_workers: object) -> None:
    """ValueError unless ``search_workers`` is None (the default) or a whole number of at least 1."""
    if search_workers is not None and (
        not isinstance(search_workers, int) or isinstance(search_workers, bool) or search_workers < 1
    ):
        raise ValueError(
            f"search_workers must be a whole number of at least 1 (1: no feature processes), or None for "
            f"half the cores; got {search_workers!r}"
        )


def candidate_features(mod: IRModule, target: Target, flops: int) -> np.ndarray:
    """The feature vector of one scheduled module; zeros for one the lowering rejects (it is
    measured and recorded as invalid, so the model learns nothing wrong from it)."""
    try:
        return extract_features(mod, target, flops)
    except Exception:  # noqa: BLE001 - see the docstring
        return np.zeros(FEATURE_LENGTH, dtype=np.float32)


def _worker_main(conn: Connection) -> None:
    while True:
        try:
            mods, target, flops = pickle.loads(conn.recv_bytes())
        except (EOFError, OSError):
            return  # the tuner closed the pipe or died
        conn.send_bytes(pickle.dumps([candidate_features(mod, target, flops) for mod in mods]))


# Seconds a worker may take to answer for its share of one group before this process computes it.
ANSWER_SECONDS = 60.0


class FeaturePool:
    """Computes feature vectors with ``workers`` processes in all (this one included); one pool
    serves every workload of a run. Use as a context manager, or call :meth:`close`."""

    def __init__(self, workers: int):
        self._children: list[Child] = []
        if workers > 1 and sys.platform.startswith("linux"):  # forking is what makes them cheap
            self._children = [Child(_worker_main, fork=True, name="tir-features") for _ in range(workers - 1)]

    def features(self, mods: Sequence[IRModule], target: Target, flops: int) -> list[np.ndarray]:
        """One vector per module, in order: ``candidate_features(mod, target, flops)`` of each."""
        slices = _slices(len(mods), len(self._children) + 1)
        sent = []
        for child, (start, stop) in zip(list(self._children), slices[1:]):
            if start < stop and self._send(child, (list(mods[start:stop]), target, flops)):
                sent.append((child, start, stop))
        start, stop = slices[0]
        vectors: list = [None] * len(mods)
        vectors[start:stop] = [candidate_features(mod, target, flops) for mod in mods[start:stop]]
        for child, start, stop in sent:
            vectors[start:stop] = self._receive(child, stop - start)
        return [
            vector if vector is not None else candidate_features(mod, target, flops)
            for vector, mod in zip(vectors, mods)
        ]

    def _send(self, child: Child, work: tuple) -> bool:
        try:
            payload = pickle.dumps(work)  # any failure here sends nothing: this process computes them
            child.conn.send_bytes(payload)
        except Exception:
            self._drop(child)
            return False
        return True

    def _receive(self, child: Child, count: int) -> list:
        try:
            # a worker stuck past ANSWER_SECONDS (a lock inherited at fork, say) is dropped like a dead one
            if child.conn.poll(ANSWER_SECONDS):
                return pickle.loads(child.conn.recv_bytes())
        except (EOFError, OSError):
            pass
        self._drop(child)
        return [None] * count  # computed here instead

    def _drop(self, child: Child) -> None:
        with suppress(ValueError):
            self._children.remove(child)
        child.kill()

    def close(self) -> None:
        """Stop the workers (a later ``features`` computes here)."""
        while self._children:
            self._children.pop().kill()

    def __enter__(self) -> FeaturePool:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def _slices(count: int, parts: int) -> list[tuple[int, int]]:
    """``parts`` consecutive (start, stop) ranges covering ``count`` items, as even as can be."""
    bounds = [count * part // parts for part in range(parts + 1)]
    return list(zip(bounds, bounds[1:]))
