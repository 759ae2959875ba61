"""tensorize: replace a block's computation by a registered tensor intrinsic (TVM's tensorize).

The block (or the block that ``blockize`` makes of a loop) must compute what the
intrinsic's ``desc`` computes (tir/tensor_intrin): the same loop extents around one
block, iterators of the same kinds and extents, bound the same way up to a constant
offset, and a body of the same shape in which each access of a desc buffer lands on
one buffer of the block at a fixed offset (the tile the intrinsic works on), of the
same dtype and storage scope. A buffer may have more dimensions than the intrinsic's
(a batch matmul's ``C[b, i, j]``): the leading ones stay at one index per tile, as
TVM's buffer regions of extent 1 do. The match is checked step by step and a mismatch
names what differs: a loop (``TensorizeLoopMismatchError``), an iterator
(``TensorizeIterMismatchError``), a buffer's dtype or scope
(``TensorizeBufferMismatchError``), an access's offset
(``TensorizeAccessMismatchError``) or the expression itself
(``TensorizeBodyMismatchError``). On success the block keeps its iterators and
regions and its body becomes the intrinsic's ``impl`` with every impl buffer bound
to the tile of its desc buffer: ``impl``'s ``A[i, j]`` becomes ``A_shared[off0 + i,
off1 + j]``.
"""

from __future__ import annotations

from dataclasses import replace

from tir import Block, BlockRealize, BufferLoad, BufferStore, For, IntImm, PrimExpr, Range, Var
from tir.arith import Analyzer
from tir.buffer import Buffer
from tir.functor import Mutator, child_fields, collect_vars, substitute
from tir.stmt import Stmt

from .blockize import blockize_loop
from .errors import ScheduleError
from .instruction import primitive
from .state import ScheduleState

# ---------------------------------------------------------------- errors


class TensorIntrinNotFoundError(ScheduleError):
    """tensorize with a name no tensor intrinsic is registered under."""


class TensorizeLoopMismatchError(ScheduleError):
    """The loops inside the block differ from the intrinsic's (number, extents)."""


class TensorizeIterMismatchError(ScheduleError):
    """A block iterator differs from the intrinsic's (kind, extent, binding)."""


class TensorizeBufferMismatchError(ScheduleError):
    """A buffer the block touches differs from the intrinsic's (dtype, scope, dimensions)."""


class TensorizeAccessMismatchError(ScheduleError):
    """An access lands on a buffer at an offset that is not fixed, or not the one other accesses use."""


class TensorizeBodyMismatchError(ScheduleError):
    """The block's computation is not the intrinsic's (another operation, constant, init)."""


# ---------------------------------------------------------------- matching


def _chain(body: Stmt) -> tuple[list[For], BlockRealize | None]:
    loops = []
    while isinstance(body, For):
        loops.append(body)
        body = body.body
    return loops, body if isinstance(body, BlockRealize) else None


class _Matcher:
    """Matches ``block`` against the body of the intrinsic's desc; ``buffers`` maps each desc
    buffer to the block's buffer and the offset of the tile in it."""

    def __init__(self, block: Block, intrin_name: str):
        self.block = block
        self.intrin = intrin_name
        self.analyzer = Analyzer()
        self.buffers: dict[Buffer, tuple[Buffer, tuple[PrimExpr, ...]]] = {}

    def _fail(self, cls: type, message: str) -> ScheduleError:
        return cls(f"can't tensorize block {self.block.name!r} with {self.intrin!r}: {message}", self.block)

    def match(self, desc_body: Stmt) -> None:
        d_loops, d_realize = _chain(desc_body)
        a_loops, a_realize = _chain(self.block.body)
        if a_realize is None:
            raise self._fail(
                TensorizeLoopMismatchError,
                "its body must be loops around one block, as the intrinsic's is (blockize a loop first, "
                "or tensorize the loop)",
            )
        if len(a_loops) != len(d_loops):
            raise self._fail(
                TensorizeLoopMismatchError,
                f"it has {len(a_loops)} loops inside, the intrinsic {len(d_loops)} "
                f"(extents {[_extent(lp) for lp in d_loops]})",
            )
        for n, (a, d) in enumerate(zip(a_loops, d_loops)):
            if _extent(a) != _extent(d):
                raise self._fail(
                    TensorizeLoopMismatchError,
                    f"loop {n} ({a.loop_var.name}) has extent {_extent(a)}, the intrinsic's "
                    f"{d.loop_var.name} has {_extent(d)}",
                )
            if not self.analyzer.can_prove_equal(a.min, d.min):
                raise self._fail(
                    TensorizeLoopMismatchError,
                    f"loop {n} ({a.loop_var.name}) starts at {a.min}, the intrinsic's "
                    f"{d.loop_var.name} at {d.min}; split or shift the loop so that it starts there",
                )
        for loop in a_loops:
            self.analyzer.update_range(loop.loop_var, _range(loop))
        loop_map = {d.loop_var: a.loop_var for a, d in zip(a_loops, d_loops)}
        inner_vars = set(loop_map.values())
        self._match_block(a_realize, d_realize, loop_map, inner_vars)

    def _match_block(self, a_realize: BlockRealize, d_realize: BlockRealize, loop_map, inner_vars) -> None:
        a_block, d_block = a_realize.block, d_realize.block
        if not (isinstance(a_realize.predicate, IntImm) and a_realize.predicate.value == 1):
            raise self._fail(TensorizeIterMismatchError, f"block {a_block.name!r} has a predicate (T.where)")
        if len(a_block.iter_vars) != len(d_block.iter_vars):
            raise self._fail(
                TensorizeIterMismatchError,
                f"block {a_block.name!r} has {len(a_block.iter_vars)} iterators, the intrinsic's "
                f"{d_block.name!r} {len(d_block.iter_vars)}",
            )
        vsub: dict[Var, PrimExpr] = {}
        for a_iv, d_iv, a_val, d_val in zip(
            a_block.iter_vars, d_block.iter_vars, a_realize.iter_values, d_realize.iter_values
        ):
            where = f"iterator {a_iv.var.name} (intrinsic: {d_iv.var.name})"
            if a_iv.kind is not d_iv.kind:
                raise self._fail(
                    TensorizeIterMismatchError,
                    f"{where} is {a_iv.kind.name.lower()}, not {d_iv.kind.name.lower()}",
                )
            if _value(a_iv.dom.extent) != _value(d_iv.dom.extent):
                raise self._fail(
                    TensorizeIterMismatchError,
                    f"{where} has extent {a_iv.dom.extent!r}, the intrinsic's {d_iv.dom.extent!r}",
                )
            offset = self.analyzer.simplify(a_val - substitute(d_val, loop_map))
            if collect_vars(offset) & inner_vars:
                raise self._fail(
                    TensorizeIterMismatchError,
                    f"{where} is bound to {a_val!r}, which does not follow the intrinsic's binding "
                    f"{d_val!r} up to a constant offset",
                )
            vsub[a_iv.var] = offset + d_iv.var if not _is_zero(offset) else d_iv.var
        if (a_block.init is None) != (d_block.init is None):
            fix = " (decompose_reduction first)" if a_block.init is not None else ""
            raise self._fail(
                TensorizeBodyMismatchError,
                f"block {a_block.name!r} {'has' if a_block.init is not None else 'has no'} init, the "
                f"intrinsic's {'does not' if d_block.init is None else 'does'}{fix}",
            )
        if a_block.init is not None:
            self._compare(d_block.init, substitute(a_block.init, vsub))
        self._compare(d_block.body, substitute(a_block.body, vsub))

    # ------------------------------------------------------------ structural comparison

    def _compare(self, desc, actual) -> None:
        if isinstance(desc, (BufferLoad, BufferStore)) and isinstance(actual, type(desc)):
            self._access(desc, actual)
            if isinstance(desc, BufferStore):
                self._compare(desc.value, actual.value)
            return
        if type(desc) is not type(actual):
            raise self._fail(
                TensorizeBodyMismatchError,
                f"the block computes {actual!r} where the intrinsic computes {desc!r}",
            )
        if isinstance(desc, Var):
            if desc is not actual:
                raise self._fail(
                    TensorizeBodyMismatchError, f"variable {actual!r} where the intrinsic has {desc!r}"
                )
            return
        names = child_fields(type(desc))
        for name in _leaf_fields(desc):
            if name not in names and getattr(desc, name) != getattr(actual, name):
                raise self._fail(
                    TensorizeBodyMismatchError,
                    f"the block computes {actual!r} where the intrinsic computes {desc!r} ({name} differs)",
                )
        for name in names:
            d, a = getattr(desc, name), getattr(actual, name)
            if isinstance(d, tuple):
                if len(d) != len(a):
                    raise self._fail(
                        TensorizeBodyMismatchError, f"{actual!r} differs from the intrinsic's {desc!r}"
                    )
                for x, y in zip(d, a):
                    self._compare(x, y)
            elif d is not None or a is not None:
                self._compare(d, a)

    def _access(self, desc: BufferLoad | BufferStore, actual: BufferLoad | BufferStore) -> None:
        d_buf, a_buf = desc.buffer, actual.buffer
        what = f"buffer {a_buf.name} (intrinsic: {d_buf.name})"
        if a_buf.dtype != d_buf.dtype:
            raise self._fail(
                TensorizeBufferMismatchError,
                f"{what} has dtype {a_buf.dtype}, the intrinsic needs {d_buf.dtype}",
            )
        if a_buf.scope != d_buf.scope:
            raise self._fail(
                TensorizeBufferMismatchError,
                f"{what} is in scope {a_buf.scope!r}, the intrinsic needs {d_buf.scope!r} (cache_read, "
                "cache_write or set_scope can move it)",
            )
        lead = a_buf.ndim - d_buf.ndim  # leading dimensions (a batch) stay at one index per tile
        if lead < 0:
            raise self._fail(
                TensorizeBufferMismatchError,
                f"{what} has {a_buf.ndim} dimensions, fewer than the intrinsic's {d_buf.ndim}",
            )
        inner = zip(actual.indices[lead:], desc.indices)
        offsets = (*actual.indices[:lead], *(self.analyzer.simplify(a - d) for a, d in inner))
        desc_vars = set().union(*(collect_vars(i) for i in desc.indices))
        if any(collect_vars(o) & desc_vars for o in offsets):
            raise self._fail(
                TensorizeAccessMismatchError,
                f"the access {_access_text(actual)} does not move with the intrinsic's {_access_text(desc)}: "
                f"the offset {list(offsets)} is not fixed",
            )
        known = self.buffers.get(d_buf)
        if known is None:
            self.buffers[d_buf] = (a_buf, offsets)
            return
        same_buffer = known[0] is a_buf
        same_offsets = all(_is_zero(self.analyzer.simplify(x - y)) for x, y in zip(known[1], offsets))
        if not (same_buffer and same_offsets):
            raise self._fail(
                TensorizeAccessMismatchError,
                f"the access {_access_text(actual)} should be at {known[0].name}{list(known[1])} + "
                f"{_access_text(desc)}, as the intrinsic's other accesses of {d_buf.name} are",
            )


def _leaf_fields(node) -> tuple[str, ...]:
    return tuple(name for name in ("dtype", "op", "value", "lanes", "kind") if hasattr(node, name))


def _access_text(access: BufferLoad | BufferStore) -> str:
    return f"{access.buffer.name}[{', '.join(repr(i) for i in access.indices)}]"


def _extent(loop: For) -> int | PrimExpr:
    return _value(loop.extent)


def _value(e: PrimExpr):
    return e.value if isinstance(e, IntImm) else e


def _is_zero(e: PrimExpr) -> bool:
    return isinstance(e, IntImm) and e.value == 0


def _range(loop: For) -> Range:
    return Range(loop.min, loop.extent)


# ---------------------------------------------------------------- instantiating the impl


class _ImplBinder(Mutator):
    """Rebinds impl buffers to the block's buffers: ``A[i, j]`` -> ``A_block[off0 + i, off1 + j]``."""

    def __init__(self, binding: dict[Buffer, tuple[Buffer, tuple[PrimExpr, ...]]], analyzer: Analyzer):
        self.binding = binding
        self.analyzer = analyzer

    def _indices(self, buffer: Buffer, indices):
        target, offsets = self.binding[buffer]
        lead = len(offsets) - len(indices)
        inner = (self.analyzer.simplify(o + i) for o, i in zip(offsets[lead:], indices))
        return target, (*offsets[:lead], *inner)

    def visit_BufferLoad(self, load: BufferLoad):
        load = self.generic_visit(load)
        if load.buffer not in self.binding:
            return load
        return BufferLoad(*self._indices(load.buffer, load.indices))

    def visit_BufferStore(self, store: BufferStore):
        store = self.generic_visit(store)
        if store.buffer not in self.binding:
            return store
        buffer, indices = self._indices(store.buffer, store.indices)
        return BufferStore(buffer, store.value, indices)


def tensorize_block(state: ScheduleState, block: Block, intrin_name: str) -> None:
    from tir.tensor_intrin import TensorIntrin, intrin_body

    try:
        intrin = TensorIntrin.get(intrin_name)
    except KeyError as err:
        raise TensorIntrinNotFoundError(str(err.args[0]), block) from None
    matcher = _Matcher(block, intrin_name)
    if block.init is not None:  # the intrinsic replaces the body only; the init would be lost
        raise matcher._fail(
            TensorizeBodyMismatchError,
            "it has an init (the start of its reduction); decompose_reduction first and tensorize the init "
            "block with a fill intrinsic",
        )
    matcher.match(intrin_body(intrin.desc, intrin_name))
    unused = [b.name for b in intrin.desc.buffer_params if b not in matcher.buffers]
    if unused:
        raise matcher._fail(TensorizeBodyMismatchError, f"the block never accesses the intrinsic's {unused}")
    binding = {
        impl_buf: matcher.buffers[desc_buf]
        for impl_buf, desc_buf in zip(intrin.impl.buffer_params, intrin.desc.buffer_params)
    }
    body = _ImplBinder(binding, Analyzer()).visit(intrin_body(intrin.impl, intrin_name))
    state.replace({block: replace(block, body=body)})


@primitive()
def tensorize(
    state: ScheduleState, block_or_loop: Block | For, tensor_intrin: str, preserve_unit_iters: bool = True
) -> None:
    if not isinstance(tensor_intrin, str):
        raise TensorIntrinNotFoundError(
            f"tensorize needs the name of a registered tensor intrinsic, got {tensor_intrin!r}"
        )
    if isinstance(block_or_loop, For):
        block_or_loop = blockize_loop(state, block_or_loop, preserve_unit_iters)
    tensorize_block(state, block_or_loop, tensor_intrin)


# ---------------------------------------------------------------- public methods


class TensorizeMethods:
    def tensorize(self, block_or_loop, tensor_intrin: str, preserve_unit_iters: bool = True) -> None:
        """Replace a block's computation (or a loop's, blockized first) by a tensor intrinsic.

        ``tensorize`` in TVM. ``tensor_intrin`` names an intrinsic registered with
        ``TensorIntrin.register`` (tir/tensor_intrin; the README lists the shipped ones).
        The block must compute what the intrinsic's ``desc`` does, on tiles of its buffers;
        its body becomes the intrinsic's ``impl`` on those tiles.

        Requirements: the same loop extents inside the block and iterator kinds and
        extents as ``desc``; bindings equal to desc's up to a fixed offset; every access of
        a desc buffer at one fixed offset into one buffer of the same dtype and scope; the
        same expression otherwise (an init only if desc has one: decompose_reduction first).

        Example
        -------
        >>> sch = Schedule(tir.parse(_FRAGMENT_MMA))
        >>> i, j, k = sch.get_loops(sch.get_block("C"))
        >>> sch.tensorize(i, "metal_simdgroup_mma_8x8x8_f32")
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((8, 8), "float32", scope="metal.simdgroup"),
                 B: T.Buffer((8, 8), "float32", scope="metal.simdgroup"),
                 C: T.Buffer((8, 8), "float32", scope="metal.simdgroup")):
            # with T.block("root"):
            with T.block("C_o"):
                vi_o = T.axis.spatial(1, 0)
                vj_o = T.axis.spatial(1, 0)
                vk_o = T.axis.reduce(1, 0)
                T.reads(C[0:8, 0:8], A[0:8, 0:8], B[0:8, 0:8])
                T.writes(C[0:8, 0:8])
                T.evaluate(T.simdgroup_multiply_accumulate(C[0:8, 0:8], A[0:8, 0:8],
                                                           B[0:8, 0:8], C[0:8, 0:8]))
        """
        return self._run(
            "tensorize",
            block_or_loop=block_or_loop,
            tensor_intrin=tensor_intrin,
            preserve_unit_iters=preserve_unit_iters,
        )


# The program the example above schedules (doctest globals: tir, Schedule).
_FRAGMENT_MMA = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32", scope="metal.simdgroup"),
         B: T.Buffer((8, 8), "float32", scope="metal.simdgroup"),
         C: T.Buffer((8, 8), "float32", scope="metal.simdgroup")):
    for i, j, k in T.grid(8, 8, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""
