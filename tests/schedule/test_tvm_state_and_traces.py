"""TVM's handles on the schedule's internals (issue 16): srefs, the state, block scopes, and
traces written instruction by instruction.

``sch.get_sref`` gives a reference that follows its loop or block across primitives;
``sch.state.get_block_scope`` lists the RAW/WAW/WAR dependencies among a scope's blocks;
``sch.state.replace(sref, stmt)`` swaps a statement; ``Instruction(InstructionKind.get(...),
inputs, attrs, outputs)`` and ``Trace(insts, decisions)`` build a trace as TVM's tests do, and it
replays to the same program as the calls it stands for.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import tir
from schedule import (
    BlockRV,
    DepKind,
    ExprRV,
    Instruction,
    InstructionKind,
    LoopRV,
    Schedule,
    StaleHandleError,
    Trace,
)
from schedule.sref import StmtSRef
from tir import T

from .util import verify_trace_roundtrip


@T.prim_func
def two_stages(A: T.Buffer((32, 16), "float32"), C: T.Buffer((32, 16), "float32")):
    B = T.alloc_buffer((32, 16))
    for i, j in T.grid(32, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(32, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


def test_an_sref_follows_its_block_and_knows_its_parent():
    sch = Schedule(two_stages)
    block = sch.get_block("C")
    sref = sch.get_sref(block)
    assert sref.stmt.name == "C" and sref.parent.stmt.loop_var.name == "j"
    assert sref.parent.parent.parent.stmt.name == "root" and sref.parent.parent.parent.parent is None
    i, _ = sch.get_loops(block)
    loop_sref = sch.get_sref(i)
    sch.split(i, [4, 8])
    assert sref.stmt is sch.get(block)  # the block was rebuilt; the sref follows it
    assert sref.parent.stmt.loop_var.name == "j"
    with pytest.raises(StaleHandleError, match="loop i, which no longer exists"):
        loop_sref.stmt  # noqa: B018 - split removed the loop


def test_srefs_of_one_block_are_equal_and_hash_alike_however_its_name_is_held():
    sch = Schedule(two_stages)
    sch.cache_write(sch.get_block("C"), 0, "local")  # a block named "C_local"
    sref = StmtSRef(sch.state, "".join(["C_", "local"]))
    same = StmtSRef(sch.state, "".join(["C_loc", "al"]))  # an equal name, another string object
    assert sref == same and hash(sref) == hash(same) and len({sref, same}) == 1
    assert sref == sch.get_sref(sch.get_block("C_local")) and sref.stmt.name == "C_local"
    assert sref != sch.get_sref(sch.get_block("C"))
    i, _ = sch.get_loops(sch.get_block("C"))
    assert sch.get_sref(i) == sch.get_sref(i) and sch.get_sref(i) != sref
    assert sch.get_sref(i).same_as(sch.get_sref(i)) and not sch.copy().get_sref(i).same_as(sch.get_sref(i))


def test_block_scope_lists_read_after_write():
    sch = Schedule(two_stages)
    root = sch.get_sref(sch.mod["main"].body.block)
    scope = sch.state.get_block_scope(root)
    producer, consumer = sch.get_sref(sch.get_block("B")), sch.get_sref(sch.get_block("C"))
    (dep,) = scope.get_deps_by_dst(consumer)
    assert (dep.src, dep.dst, dep.kind) == (producer, consumer, DepKind.RAW)
    assert scope.get_deps_by_src(consumer) == [] and scope.get_deps_by_dst(producer) == []


def test_state_replace_takes_an_sref_and_a_statement():
    sch = Schedule(two_stages)
    block = sch.get(sch.get_block("C"))
    sref = sch.get_sref(sch.get_block("C"))
    doubled = tir.stmt.BufferStore(block.body.buffer, block.body.value * 2.0, block.body.indices)
    sch.state.replace(sref, replace(block, body=doubled))
    a, c = np.random.default_rng(1).random((32, 16)).astype("float32"), np.zeros((32, 16), "float32")
    tir.interpret(sch.mod, a, c)
    np.testing.assert_allclose(c, (a * 2 + 1) * 2, rtol=1e-6)


def test_a_trace_built_from_tvm_instructions_replays_like_the_calls():
    b0, l1, l2, l3, l4, v5, v6 = BlockRV(), LoopRV(), LoopRV(), LoopRV(), LoopRV(), ExprRV(), ExprRV()
    sample = Instruction(
        InstructionKind.get("SamplePerfectTile"), inputs=[l1], attrs=[2, 16], outputs=[v5, v6]
    )
    insts = [
        Instruction(InstructionKind.get("GetBlock"), inputs=[], attrs=["C", "main"], outputs=[b0]),
        Instruction(InstructionKind.get("GetLoops"), inputs=[b0], attrs=[], outputs=[l1, l2]),
        sample,
        Instruction(InstructionKind.get("Split"), inputs=[l1, v5, v6], attrs=[True, False], outputs=[l3, l4]),
        Instruction(InstructionKind.get("Parallel"), inputs=[l3], attrs=[], outputs=[]),
    ]
    trace = Trace(insts, {sample: [4, 8]})
    replayed = Schedule(two_stages)
    trace.apply_to_schedule(replayed)

    sch = Schedule(two_stages)
    i, _ = sch.get_loops(sch.get_block("C"))
    factors = sch.sample_perfect_tile(i, 2, 16, decision=[4, 8])
    outer, _ = sch.split(i, factors)
    sch.parallel(outer)
    tir.assert_structural_equal(replayed.mod, sch.mod)
    verify_trace_roundtrip(replayed, two_stages)


def test_instruction_kinds_use_tvms_names():
    assert InstructionKind.get("RFactor").name == "rfactor"
    assert InstructionKind.get("ReverseComputeAt").name == "reverse_compute_at"
    with pytest.raises(ValueError, match="no instruction kind 'Splitt'"):
        InstructionKind.get("Splitt")


def test_the_root_block_has_a_handle_as_in_tvm():
    sch = Schedule(two_stages)
    root = sch.get_block("root")
    assert [sch.get(b).name for b in sch.get_child_blocks(root)] == ["B", "C"]
    assert sch.get_sref(root).parent is None


def test_a_trace_pops_its_last_instruction_and_finds_decisions():
    sch = Schedule(two_stages, seed=5)
    (i, _) = sch.get_loops(sch.get_block("B"))
    sch.sample_perfect_tile(i, n=2)
    trace = sch.trace.copy()
    sampled, lookup = trace.insts[-1], trace.insts[0]
    assert trace.get_decision(sampled) == sampled.decision and trace.get_decision(lookup) is None
    assert trace.pop() is sampled and len(trace) == 2
    assert Trace().pop() is None


def test_a_decision_provider_chooses_what_a_replay_samples():
    sch = Schedule(two_stages, seed=5)
    (i, _) = sch.get_loops(sch.get_block("B"))
    sch.sample_perfect_tile(i, n=2)
    seen = []

    def provider(inst, inputs, attrs, decision):
        seen.append((inst.kind, len(inputs), decision))
        return [2, 16]

    replayed = Schedule(two_stages)
    sch.trace.apply_to_schedule(replayed, remove_postproc=True, decision_provider=provider)
    assert seen == [("sample_perfect_tile", 1, sch.trace.insts[-1].decision)]
    assert replayed.trace.insts[-1].decision == [2, 16]
