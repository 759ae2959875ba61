"""The backend registry: every target is one record, and a new one needs nothing but its entry."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from codegen import BuildError, Target, build
from codegen.backend import Backend
from codegen.c import BACKEND as C_BACKEND
from codegen.metal.printer import METAL_TYPES
from codegen.metal.sim.simulator import host_translation_unit
from codegen.registry import ALIASES, BACKENDS
from tests.codegen.seed_kernels import SEED_KERNELS


def test_every_kind_and_alias_parses_to_its_backend():
    assert list(BACKENDS) == ["c", "cuda", "metal"]
    for kind, backend in BACKENDS.items():
        assert isinstance(backend, Backend) and Target.parse(kind).backend is backend
        assert Target.parse(kind) == backend.defaults
        for alias in backend.aliases:
            assert Target.parse(alias).kind == kind
    assert [kind for kind in BACKENDS if Target.parse(kind).is_gpu] == ["cuda", "metal"]
    assert Target.parse("metal").backend.devices == ("gpu", "sim")
    assert Target.parse("cuda").backend.check_device(None) == "gpu"


def test_a_new_backend_is_one_registry_entry(monkeypatch):
    toy_target = dataclasses.replace(C_BACKEND.defaults, kind="toy", vector_bytes=16)
    toy = dataclasses.replace(C_BACKEND, kind="toy", aliases=("toycpu",), defaults=toy_target)
    monkeypatch.setitem(BACKENDS, "toy", toy)
    monkeypatch.setitem(ALIASES, "toycpu", "toy")
    rng = np.random.default_rng(0)
    a, b = rng.random(256, dtype=np.float32), rng.random(256, dtype=np.float32)
    c = np.full(256, np.nan, dtype=np.float32)
    module = build(SEED_KERNELS["vector_add"](256), "toycpu")
    assert module.target.kind == "toy"
    module["main"](a, b, c)
    np.testing.assert_array_equal(c, a + b)
    with pytest.raises(BuildError, match="device 'gpu' is not available for target 'toy'; it has cpu"):
        build(SEED_KERNELS["vector_add"](256), "toy", device="gpu")


def test_simulator_reads_the_printers_metal_types():
    module = build(SEED_KERNELS["vector_add"](256), "metal", device="sim")
    wrappers = host_translation_unit(module.get_source(), list(module.functions.values()))
    assert f"({METAL_TYPES['float32']}*)args[0]" in wrappers
