"""Layout primitives: transform_layout and transform_block_layout (TVM's layout_transformation).

``transform_layout`` changes how a buffer is stored: every access ``B[i, j]``
anywhere in the function becomes ``B[f(i, j)]`` for an ``IndexMap`` f (written
as a lambda), and the buffer takes the shape of f's image. When f is not onto
its image (``lambda i: (i // 4, i % 4)`` over 14 elements leaves two slots of the
last row unused), the new buffer has padding: that is refused unless the caller
gives ``pad_value``, which a separate block writes into the padding after the
block named (or ``assume_injective_transform=True``, which leaves it unwritten).
``transform_block_layout`` relabels a block's iteration space instead: its
iterators become f's outputs, and new loops, one per output, drive them. Both
need f to be an affine bijection (the pieces TVM's DetectIterMap finds), which
is what makes the inverse, and so the rewrite, exact.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

from tir import (
    GE,
    Block,
    BlockRealize,
    Buffer,
    BufferLoad,
    BufferStore,
    FloatImm,
    FloorDiv,
    FloorMod,
    For,
    ForKind,
    IndexMap,
    IndexMapError,
    IntImm,
    IterVar,
    Mutator,
    PrimExpr,
    Range,
    Stmt,
    Var,
    const,
    op,
    post_order_visit,
    substitute,
)
from tir.analysis.access_bounds import linear_terms
from tir.analysis.block_access import region_of
from tir.arith import Analyzer
from tir.arith.iter_map import IterSumExpr
from tir.buffer import BufferRegion
from tir.functor import collect_vars

from .analysis import loop_iters
from .cache_stage import spatial_stage
from .errors import ScheduleError
from .index_maps import (
    BlockArgumentMethods,
    IndexMapNotApplicableError,
    as_index_map,
    bijection,
    buffer_at,
    buffer_position,
    inverse_of,
    static_extents,
)
from .instruction import BlockRV, primitive
from .state import ScheduleState

# ---------------------------------------------------------------- errors


class TransformationPaddingError(ScheduleError):
    """The new layout has padding and no (or a mistyped) pad_value says what it holds."""


class TransformBlockLayoutError(ScheduleError):
    """The block's loops are not one serial loop per iterator holding only the block."""


# ---------------------------------------------------------------- arguments


def plain_pad_value(pad_value, buffer: Buffer, where: Block):
    """``pad_value`` as a Python number of the buffer's kind (TVM's dtype rule: no int for floats)."""
    if pad_value is None:
        return None
    if isinstance(pad_value, (IntImm, FloatImm)):
        if pad_value.dtype != buffer.dtype:
            raise TransformationPaddingError(
                f"pad_value {pad_value!r} has dtype {pad_value.dtype}, but buffer {buffer.name} holds "
                f"{buffer.dtype}",
                where,
            )
        pad_value = pad_value.value
    is_float = buffer.dtype.startswith(("float", "bfloat"))
    wanted = float if is_float else (bool if buffer.dtype == "bool" else int)
    if type(pad_value) is not wanted:
        raise TransformationPaddingError(
            f"pad_value {pad_value!r} is a {type(pad_value).__name__}, but buffer {buffer.name} holds "
            f"{buffer.dtype}: pass a {wanted.__name__}" + (" (0.0, not 0)" if is_float else ""),
            where,
        )
    return pad_value


# ---------------------------------------------------------------- the map's image and inverse


def _padded_extents(index_map: IndexMap, extents: list[int]) -> list[int]:
    """Each input extent rounded up to a multiple of the constant divisors applied to it."""
    divisors: dict[Var, int] = {v: 1 for v in index_map.initial_indices}

    def note(node) -> None:
        if isinstance(node, (FloorDiv, FloorMod)) and isinstance(node.b, IntImm) and node.b.value > 0:
            for var in collect_vars(node.a):
                if var in divisors:
                    divisors[var] = math.lcm(divisors[var], node.b.value)

    for e in index_map.final_indices:
        post_order_visit(e, note)
    return [-(-n // divisors[v]) * divisors[v] for v, n in zip(index_map.initial_indices, extents)]


def _box_of(sums: list[IterSumExpr], dtype: str) -> tuple[PrimExpr, ...]:
    return tuple(const(s.extent, dtype) for s in sums)


# ---------------------------------------------------------------- the access rewriter


class _AccessRewriter(Mutator):
    """Rewrites buffer loads, stores and block regions, knowing the ranges of the loops and block
    iterators it is under (so ``(vo * 16 + vi) // 16`` simplifies to ``vo``)."""

    def __init__(self, indices: Callable, region: Callable, allocations: dict[Buffer, Buffer] | None = None):
        self.indices = indices  # (buffer, indices, analyzer) -> (buffer, indices) | None
        self.region = region  # (BufferRegion, analyzer) -> BufferRegion
        self.allocations = allocations or {}
        self.analyzer = Analyzer()

    def visit_For(self, loop: For):
        self.analyzer.update_range(loop.loop_var, Range(loop.min, loop.extent))
        return self.generic_visit(loop)

    def visit_Block(self, block: Block):
        for iv in block.iter_vars:
            self.analyzer.update_range(iv.var, iv.dom)
        new = self.generic_visit(block)
        changes = {
            "reads": tuple(self.region(r, self.analyzer) for r in new.reads),
            "writes": tuple(self.region(r, self.analyzer) for r in new.writes),
            "alloc_buffers": tuple(self.allocations.get(b, b) for b in new.alloc_buffers),
        }
        return replace(new, **changes)

    def visit_BufferLoad(self, load: BufferLoad):
        load = self.generic_visit(load)
        found = self.indices(load.buffer, load.indices, self.analyzer)
        return load if found is None else replace(load, buffer=found[0], indices=found[1])

    def visit_BufferStore(self, store: BufferStore):
        store = self.generic_visit(store)
        found = self.indices(store.buffer, store.indices, self.analyzer)
        return store if found is None else replace(store, buffer=found[0], indices=found[1])


def _mapped_region(
    region: BufferRegion, index_map: IndexMap, new: Buffer, analyzer: Analyzer
) -> BufferRegion:
    """The box of ``new`` that ``region`` of the old buffer maps into."""
    if all(isinstance(r.extent, IntImm) and r.extent.value == 1 for r in region.region):
        mapped = index_map.map_indices([r.min for r in region.region], analyzer)
        return BufferRegion(new, tuple(Range(i, const(1, i.dtype)) for i in mapped))
    offsets = [Var(f"r{d}", r.extent.dtype) for d, r in enumerate(region.region)]
    mapped = index_map.map_indices([r.min + o for r, o in zip(region.region, offsets)], analyzer)
    dom = {o: Range(const(0, o.dtype), r.extent) for o, r in zip(offsets, region.region)}
    return BufferRegion(new, region_of(mapped, dom, analyzer))


# ---------------------------------------------------------------- transform_layout


@primitive()
def transform_layout(
    state: ScheduleState,
    block: Block,
    buffer,
    index_map,
    pad_value=None,
    assume_injective_transform: bool = False,
) -> None:
    # Step 1. the buffer, the map, and the new shape (with its padding, if any)
    old = buffer_at(block, buffer)
    dtype = old.shape[0].dtype if old.shape else "int32"
    index_map = as_index_map(index_map, old.ndim, dtype, block)
    pad_value = plain_pad_value(pad_value, old, block)
    extents = static_extents(old.shape, f"buffer {old.name}", block)
    sums = bijection(index_map, extents, block)
    padding = None
    if sums is None:
        padded = _padded_extents(index_map, extents)
        sums = bijection(index_map, padded, block) if padded != extents else None
        if sums is None:
            raise IndexMapNotApplicableError(
                f"index map {index_map} is not a one-to-one affine map of buffer {old.name}'s "
                f"indices {extents} onto a box (TVM: the transformation is not bijective)",
                block,
            )
        outputs = [Var(f"v{k}", dtype) for k in range(len(sums))]
        inverse = inverse_of(index_map, sums, outputs)
        padding = [inverse[v] >= n for v, n in zip(index_map.initial_indices, extents)]
        if pad_value is None and not assume_injective_transform:
            raise TransformationPaddingError(
                f"index map {index_map} pads buffer {old.name} from {extents} to "
                f"{[s.extent for s in sums]} elements per output axis: the transformation requires "
                "padding. Pass pad_value (what the padding holds) or assume_injective_transform=True",
                block,
            )
        if pad_value is not None and not any(r.buffer is old for r in block.writes):
            raise TransformationPaddingError(
                f"the padding of buffer {old.name} is written after the block that produces it, but "
                f"block {block.name!r} only reads it; name the block that writes {old.name}",
                block,
            )
    new = Buffer(old.name, _box_of(sums, dtype), old.dtype, old.scope)

    # Step 2. rewrite every access of the buffer in the function
    def indices(buf, idx, analyzer):
        return (new, index_map.map_indices(idx, analyzer)) if buf is old else None

    def region(r, analyzer):
        return _mapped_region(r, index_map, new, analyzer) if r.buffer is old else r

    func = state.func
    body = _AccessRewriter(indices, region, {old: new}).visit(func.body)
    params = tuple(new if p is old else p for p in func.params)
    state.set_func(replace(func, params=params, body=body))

    # Step 3. write pad_value into the padding, right after the producer's loop nest
    if padding is not None and pad_value is not None:
        _append_padding_block(state, block.name, new, outputs, padding, pad_value)


def _append_padding_block(
    state: ScheduleState, producer: str, buffer: Buffer, outputs: list[Var], padding: list, pad_value
) -> None:
    def where(loop_vars: list[Var]) -> PrimExpr:
        analyzer = Analyzer()
        for loop_var, extent in zip(loop_vars, buffer.shape):
            analyzer.bind(loop_var, Range(const(0, extent.dtype), extent))
        to_loops = dict(zip(outputs, loop_vars))
        parts = [analyzer.simplify(substitute(part, to_loops)) for part in padding]
        if len(parts) == 1 and (last_row := _last_row_tail(parts[0], loop_vars, buffer.shape)) is not None:
            return last_row
        condition = const(False)
        for part in parts:
            condition = op.logical_or(condition, part)
        return analyzer.simplify(condition)

    def body(iters: list[Var]):
        store = BufferStore(buffer, const(pad_value, buffer.dtype), tuple(iters))
        point = BufferRegion(buffer, tuple(Range(v, const(1, v.dtype)) for v in iters))
        return store, (), (point,)

    name = state.unique_name(f"{producer}_pad_{buffer.name}")
    state.insert_beside(
        state.index.blocks[producer], spatial_stage(name, list(buffer.shape), body, where), True
    )


def _last_row_tail(part: PrimExpr, loop_vars: list[Var], shape) -> PrimExpr | None:
    """``row * width + col >= n``, the padding of one index split in two, as TVM writes it:
    ``row == n // width and n % width <= col`` (the tail of the last row); None for other maps."""
    if not isinstance(part, GE) or not isinstance(part.b, IntImm):
        return None
    terms = linear_terms(part.a)
    extents = {v: e for v, e in zip(loop_vars, shape)}
    if terms is None or terms[1] != 0 or len(terms[0]) != 2:
        return None
    (row, width), (col, one) = sorted(terms[0].items(), key=lambda kv: -kv[1])
    col_extent, row_extent = extents.get(col), extents.get(row)
    n = part.b.value
    if one != 1 or not isinstance(col_extent, IntImm) or col_extent.value != width or row_extent is None:
        return None
    if not isinstance(row_extent, IntImm) or n // width != row_extent.value - 1 or n % width == 0:
        return None
    dtype = row.dtype
    return op.logical_and(op.eq(row, const(n // width, dtype)), op.le(const(n % width, dtype), col))


# ---------------------------------------------------------------- transform_block_layout


@primitive()
def transform_block_layout(state: ScheduleState, block: Block, index_map) -> None:
    # Step 1. the block's loops are one plain loop per iterator, holding only the block
    realize = state.realize_of(block)
    loops = state.loops_of(block)
    trivial = loop_iters(state, block) is not None
    chain = all(outer.body is inner for outer, inner in zip(loops, [*loops[1:], realize]))
    if not (trivial and chain):
        raise TransformBlockLayoutError(
            f"can't transform the layout of block {block.name!r}: its loops must be one plain serial "
            "loop from 0 per block iterator, bound directly, with no predicate and nothing else inside "
            "(TVM: the block must have trivial bindings and be the only child of its loops)",
            block,
            *loops,
        )
    dtype = block.iter_vars[0].var.dtype if block.iter_vars else "int32"
    index_map = as_index_map(index_map, len(block.iter_vars), dtype, block)

    # Step 2. the map in the block's iterators: an affine bijection, each output of one kind
    to_iters = {v: iv.var for v, iv in zip(index_map.initial_indices, block.iter_vars)}
    in_iters = IndexMap(
        tuple(iv.var for iv in block.iter_vars),
        tuple(substitute(e, to_iters) for e in index_map.final_indices),
    )
    extents = static_extents([iv.dom.extent for iv in block.iter_vars], f"block {block.name!r}", block)
    sums = bijection(in_iters, extents, block)
    extent_of = {iv.var: n for iv, n in zip(block.iter_vars, extents)}
    unit_outputs = {  # an iterator of extent 1 passed through as an output: the detector drops it
        k: e for k, e in enumerate(in_iters.final_indices) if isinstance(e, Var) and extent_of.get(e) == 1
    }
    if sums is None or any(not s.args and k not in unit_outputs for k, s in enumerate(sums)):
        raise IndexMapNotApplicableError(
            f"index map {index_map} is not a one-to-one affine map of block {block.name!r}'s iteration "
            f"space {extents}",
            block,
        )
    kind_of = {iv.var: iv.kind for iv in block.iter_vars}
    kinds = []
    for k, s in enumerate(sums):
        used = {kind_of[a.source.source] for a in s.args} or {kind_of[unit_outputs[k]]}
        if len(used) != 1:
            raise IndexMapNotApplicableError(
                f"output {k} of index map {index_map} mixes spatial and reduction iterators of block "
                f"{block.name!r} (TVM: mixed iter types); keep each output within one kind",
                block,
            )
        kinds.append(used.pop())

    # Step 3. new iterators and loops; the body reads the old iterators through the inverse
    loop_by_var = {loop.loop_var: loop for loop in loops}
    loop_of = {iv.var: loop_by_var[v] for iv, v in zip(block.iter_vars, realize.iter_values)}
    names = [_output_names(e, k, kind_of, loop_of) for k, e in enumerate(in_iters.final_indices)]
    new_iters = tuple(
        IterVar(Var(name, dtype), Range(const(0, dtype), const(s.extent, dtype)), kind)
        for (name, _), s, kind in zip(names, sums, kinds)
    )
    inverse = inverse_of(in_iters, sums, [iv.var for iv in new_iters])
    inverse.update({e: new_iters[k].var for k, e in unit_outputs.items()})
    analyzer = Analyzer()
    for iv in new_iters:
        analyzer.update_range(iv.var, iv.dom)
    inverse = {v: analyzer.simplify(e) for v, e in inverse.items()}
    moved = replace(
        block,
        iter_vars=new_iters,
        body=substitute(block.body, inverse),
        init=None if block.init is None else substitute(block.init, inverse),
        reads=tuple(substitute(r, inverse) for r in block.reads),
        writes=tuple(substitute(r, inverse) for r in block.writes),
    )
    moved = _AccessRewriter(_simplified_indices, _simplified_region).visit(moved)
    loop_vars = [Var(loop_name, dtype) for _, loop_name in names]
    stmt: Stmt = BlockRealize(tuple(loop_vars), realize.predicate, moved)
    for loop_var, iv in reversed(list(zip(loop_vars, new_iters))):
        stmt = For(loop_var, const(0, dtype), iv.dom.extent, ForKind.SERIAL, stmt)
    state.replace({(loops[0] if loops else realize): stmt})


def _output_names(expr: PrimExpr, k: int, kind_of: dict, loop_of: dict) -> tuple[str, str]:
    """An output that is an old iterator keeps its name and its loop's; others are ``v{k}``/``ax{k}``."""
    if isinstance(expr, Var) and expr in kind_of:
        return expr.name, loop_of[expr].loop_var.name
    return f"v{k}", f"ax{k}"


def _simplified_indices(buffer, indices, analyzer):
    return buffer, tuple(analyzer.simplify(i) for i in indices)


def _simplified_region(region: BufferRegion, analyzer: Analyzer) -> BufferRegion:
    ranges = tuple(Range(analyzer.simplify(r.min), analyzer.simplify(r.extent)) for r in region.region)
    return BufferRegion(region.buffer, ranges)


# ---------------------------------------------------------------- public methods


class LayoutTransformationMethods(BlockArgumentMethods):
    def transform_layout(
        self,
        block: BlockRV | str,
        buffer: tuple[str, int] | str | Buffer,
        index_map: Callable | IndexMap | str,
        pad_value: int | float | None = None,
        assume_injective_transform: bool = False,
    ) -> None:
        """Store ``buffer`` in a new layout: every access ``B[idx]`` becomes ``B[index_map(idx)]``.

        ``transform_layout`` in TVM; Halide's ``Func::reorder_storage`` and exo's
        ``rearrange_dim``/``divide_dim`` are special cases. ``buffer`` is ``("read", n)``,
        ``("write", n)`` (the block's n-th read or written buffer) or a buffer name;
        ``block`` may be a name. Every access in the function changes, parameters
        included (the caller then passes arrays in the new shape).

        Requirements: ``index_map`` (a lambda of the buffer's indices, an ``IndexMap``)
        is a one-to-one affine map onto a box. A map that leaves slots unused (14
        elements as ``(i // 4, i % 4)``) pads the buffer: ``pad_value`` (of the buffer's
        dtype) is then written into the padding by a new block after ``block``, which
        must write the buffer; ``assume_injective_transform=True`` leaves it unwritten.

        Example
        -------
        >>> sch = Schedule(tir.parse(_SCALE_VIA_B))
        >>> sch.transform_layout("B", ("write", 0), lambda i, j: (i // 4, j // 4, i % 4, j % 4))
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
            # with T.block("root"):
            B = T.alloc_buffer((2, 2, 4, 4))
            for i, j in T.grid(8, 8):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A[vi, vj])
                    T.writes(B[vi // 4, vj // 4, vi % 4, vj % 4])
                    B[vi // 4, vj // 4, vi % 4, vj % 4] = A[vi, vj] * T.float32(2.0)
            for x, y in T.grid(8, 8):
                with T.block("C"):
                    vx, vy = T.axis.remap("SS", [x, y])
                    T.reads(B[vx // 4, vy // 4, vx % 4, vy % 4])
                    T.writes(C[vx, vy])
                    C[vx, vy] = B[vx // 4, vy // 4, vx % 4, vy % 4] + T.float32(1.0)
        """
        block = self._block_argument(block)
        node = self.get(block)

        def prepare():
            position = buffer_position(node, buffer)
            old = buffer_at(node, position)
            dtype = old.shape[0].dtype if old.shape else "int32"
            mapping, separators = index_map, []
            if callable(index_map) and not isinstance(index_map, IndexMap):
                try:  # TVM's IndexMap.AXIS_SEPARATOR markers: separators of the new buffer
                    mapping, separators = IndexMap.from_func_with_separators(index_map, old.ndim, dtype)
                except IndexMapError as err:
                    raise IndexMapNotApplicableError(str(err), node) from err
            text = str(as_index_map(mapping, old.ndim, dtype, node))
            return position, text, plain_pad_value(pad_value, old, node), separators

        position, text, value, separators = self._prepared("transform_layout", prepare)
        self._run(
            "transform_layout",
            block=block,
            buffer=position,
            index_map=text,
            pad_value=value,
            assume_injective_transform=assume_injective_transform,
        )
        if separators:  # a second instruction, as TVM records it
            kind, index = position
            self._run(
                "set_axis_separator",
                block=block,
                buffer_index=index,
                buffer_index_type=kind,
                axis_separators=separators,
            )

    def transform_block_layout(self, block: BlockRV | str, index_map: Callable | IndexMap | str) -> None:
        """Relabel a block's iteration space: its iterators become ``index_map``'s outputs.

        ``transform_block_layout`` in TVM. New loops, one per output, replace the
        block's loops; the body reads the old iterators through the map's inverse,
        so it computes the same values in a new order (fusing ``i, j`` into one
        iterator, or swapping them, as a layout change of the iteration space).

        Requirements: the block's loops are one plain serial loop from 0 per
        iterator, bound directly with no predicate and holding only the block; the
        map is a one-to-one affine map of the iteration space onto a box, and no
        output mixes spatial and reduction iterators.

        Example
        -------
        >>> sch = Schedule(tir.parse(_SCALE))
        >>> sch.transform_block_layout("B", lambda i, j: (i * 8 + j,))
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
            # with T.block("root"):
            for ax0 in range(64):
                with T.block("B"):
                    v0 = T.axis.spatial(64, ax0)
                    T.reads(A[v0 // 8, v0 % 8])
                    T.writes(B[v0 // 8, v0 % 8])
                    B[v0 // 8, v0 % 8] = A[v0 // 8, v0 % 8] * T.float32(2.0)
        """
        block = self._block_argument(block)
        node = self.get(block)

        def prepare():
            dtype = node.iter_vars[0].var.dtype if node.iter_vars else "int32"
            return str(as_index_map(index_map, len(node.iter_vars), dtype, node))

        text = self._prepared("transform_block_layout", prepare)
        return self._run("transform_block_layout", block=block, index_map=text)


# The programs the examples above schedule (doctest globals: tir, Schedule).
_SCALE = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
"""

_SCALE_VIA_B = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    B = T.alloc_buffer((8, 8))
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for x, y in T.grid(8, 8):
        with T.block("C"):
            vx, vy = T.axis.remap("SS", [x, y])
            C[vx, vy] = B[vx, vy] + T.float32(1)
"""
