"""The tensor-core rule's first half: which blocks go to matrix units, and bringing them to GEMM form.

MetaSchedule's MultiLevelTilingTensorCore tensorizes any einsum whose iterators
fall into the roles of a (batched) matrix multiply, not only a 2-D matmul; this
file does that ahead of the tiling in tensor_core.py. Each iterator of extent > 1
gets a role from the buffers it indexes (A and B the two inputs, C the output):
*batch* (A, B and C, spatial: a batch matmul's ``b``), *M* (A and C: conv2d's
``n, h, w``), *N* (B and C: ``co``) and *K* (A and B, reduction: ``rh, rw, rc``).
``matrix_unit_misfit`` says why a block does not fit (another role pattern, as
depthwise convolution's channel, which indexes all three buffers and leaves no N;
a body other than ``out = out + A * B``, casts allowed;
dtypes without an intrinsic; float32, which keeps the pipelined scalar tiling; an
M, N or K smaller than the intrinsic's tile), or None when it does; ``classify``
(structure.py) picks the tensor-core rule with it, and the generator keeps the
reason for the blocks that get the scalar rule instead.

``to_gemm_form`` rewrites a fitting block, before auto-inline, as MetaSchedule does:
a block that is not already ``C[b?, m, n] += A[b?, m, k] * B[b?, k, n]`` in plain
iterators has each buffer staged through ``reindex`` (conv2d's input window becomes
an im2col buffer), each staged buffer laid out as ``[batch?, rows, columns]`` by
``transform_layout`` and the block's iteration space fused to ``(batch?, M, N, K)``
by ``transform_block_layout`` (the copy blocks too, so that they inline later). A
GEMM whose M, N or K is not a multiple of the tile is then padded up to it with
``pad_einsum``: the padded inputs read zeros, the padded outputs are dropped by
the copy back. Padding always applies to a block in GEMM form, so shapes fall back
to the scalar space only when an extent is smaller than the tile (most of each
tile would be padding). ``tensor_core_gemm_gpu`` then tiles and tensorizes the
block (tensor_core.py) and ``compute_inline``s the input copies (reindex and pad
stages) into the shared-memory fetches, so the im2col buffer and the zero padding
are never written to memory; the output copy (the reindexed or padded C back
into the function's output) stays an elementwise kernel of its own.
"""

from __future__ import annotations

from math import prod

from codegen.target import Target
from schedule import BlockRV, Schedule, ScheduleError
from tir import Block, IndexMap, IntImm, IterKind, PrimExpr, Var, const
from tir.expr import Add, BufferLoad, Cast, FloatImm, Mul
from tir.functor import collect_vars
from tir.stmt import BufferStore

from .structure import is_spatial
from .tensor_core import UNITS, intrinsic_names, tensor_core_gpu

ROLES = ("batch", "m", "n", "k")
# (indexes A, indexes B, indexes C) -> role, for spatial and for reduction iterators
_SPATIAL_ROLES = {(True, True, True): "batch", (True, False, True): "m", (False, True, True): "n"}
_REDUCE_ROLES = {(True, True, False): "k"}
_ROLE_TEXT = {
    "m": "M iterator (spatial, indexing A and C only)",
    "n": "N iterator (spatial, indexing B and C only)",
    "k": "K iterator (a reduction indexing A and B)",
}


def gemm_roles(block: Block) -> dict[Var, str] | str:
    """Each iterator of extent > 1 of ``block`` -> its role ("batch", "m", "n", "k"), or why the block
    is not a (batched) matrix multiply."""
    out = block.writes[0].buffer if len(block.writes) == 1 else None
    inputs = list(dict.fromkeys(r.buffer for r in block.reads if r.buffer is not out))
    if out is None or len(inputs) != 2:
        return f"block {block.name!r} does not read two inputs into one output as a matrix multiply does"
    if any(not isinstance(iv.dom.extent, IntImm) for iv in block.iter_vars):
        return f"block {block.name!r} has an iterator of non-constant extent: its tiles can't be fixed"
    used = [_region_vars(block, buffer) for buffer in (*inputs, out)]
    roles: dict[Var, str] = {}
    for iv in block.iter_vars:
        if _extent(iv.dom.extent) == 1:
            continue
        pattern = tuple(iv.var in u for u in used)
        table = _SPATIAL_ROLES if iv.kind is IterKind.SPATIAL else _REDUCE_ROLES
        role = table.get(pattern) if iv.kind in (IterKind.SPATIAL, IterKind.REDUCE) else None
        if role is None:
            where = ", ".join(b.name for b, u in zip((*inputs, out), used) if iv.var in u) or "no buffer"
            return (
                f"iterator {iv.var.name} of block {block.name!r} ({iv.kind.name.lower()}) indexes {where}: "
                "not a batch, M, N or K iterator of a matrix multiply"
            )
        roles[iv.var] = role
    missing = [_ROLE_TEXT[r] for r in ROLES[1:] if r not in roles.values()]
    if missing:
        return f"block {block.name!r} has no {' and no '.join(missing)}, so it is not a matrix multiply"
    return roles


def matrix_unit_misfit(sch: Schedule, block: Block, target: Target) -> str | None:
    """Why ``block`` does not go to ``target``'s matrix unit (see the module docstring), or None."""
    if target.kind not in UNITS:
        return f"target {target.kind} has no matrix unit"
    roles = gemm_roles(block)
    if isinstance(roles, str):
        return roles
    if not _multiply_adds(block):
        return (
            f"block {block.name!r} is GEMM-shaped but its body is not out = out + A * B (a matrix unit only "
            "multiplies and adds)"
        )
    if sch.loop_iters(block) is None:
        return f"block {block.name!r} is not bound one plain loop per iterator"
    inputs = {r.buffer.dtype for r in block.reads if r.buffer is not block.writes[0].buffer}
    out = block.writes[0].buffer.dtype
    if len(inputs) != 1:
        return f"block {block.name!r} reads inputs of different dtypes {sorted(inputs)}"
    (dtype,) = inputs
    if dtype == "float32":
        return "float32 keeps the scalar tiling and its software pipelines (tensor_core.py says why)"
    if intrinsic_names(target.kind, dtype, out) is None:
        return f"target {target.kind} has no matrix intrinsic for {dtype} inputs into {out}"
    tiles = dict(zip("mnk", UNITS[target.kind][0]))
    for role, tile in tiles.items():
        extent = prod(_extent(iv.dom.extent) for iv in block.iter_vars if roles.get(iv.var) == role)
        if extent < tile:
            return (
                f"the {role.upper()} extent {extent} of block {block.name!r} is smaller than the "
                f"{tile}-wide tile of {target.kind}'s matrix unit: most of each tile would be padding"
            )
    return None


def _multiply_adds(block: Block) -> bool:
    """Whether ``block``'s body is ``out[...] = out[...] + A[...] * B[...]`` (either order, each load
    possibly cast), with an init that stores zero if it has one: what every matrix intrinsic computes."""
    out = block.writes[0].buffer
    body = block.body
    if not isinstance(body, BufferStore) or body.buffer is not out or not isinstance(body.value, Add):
        return False
    terms = (body.value.a, body.value.b)
    accumulator = [t for t in terms if isinstance(t, BufferLoad) and t.buffer is out]
    products = [_uncast(t) for t in terms if not (isinstance(t, BufferLoad) and t.buffer is out)]
    if len(accumulator) != 1 or len(products) != 1 or not isinstance(products[0], Mul):
        return False
    factors = {_uncast(products[0].a), _uncast(products[0].b)}
    if not all(isinstance(f, BufferLoad) and f.buffer is not out for f in factors) or len(factors) != 2:
        return False
    init = block.init
    return init is None or (isinstance(init, BufferStore) and _is_zero(_uncast(init.value)))


def _uncast(expr: PrimExpr) -> PrimExpr:
    return expr.value if isinstance(expr, Cast) else expr


def _is_zero(expr: PrimExpr) -> bool:
    return isinstance(expr, (IntImm, FloatImm)) and expr.value == 0


def to_gemm_form(sch: Schedule, name: str, target: Target) -> None:
    """Rewrite block ``name`` (which ``matrix_unit_misfit`` accepts) as ``C[b?, m, n] += A[b?, m, k] *
    B[b?, k, n]`` padded to the tile (see the module docstring); ``read_stages`` names the input
    copies it makes.

    A 3x3 convolution over a padded 6x6x16 input into 16 channels becomes a GEMM of M = 36 output
    pixels (padded to 48), N = 16 channels and K = 3 * 3 * 16:

    >>> from tuner import workloads
    >>> sch = Schedule(workloads.conv2d_nhwc(1, 6, 6, 16, 16, 3, 3, 1, 1, "float16"))
    >>> to_gemm_form(sch, "Y", Target.parse("cuda"))
    >>> print(sch.get(sch.get_block("Y")).body)
    Y_reindex_pad[v0, vco] = Y_reindex_pad[v0, vco] + X_pad_reindex_pad[v0, v2] * W_reindex[v2, vco]
    >>> [iv.dom.extent.value for iv in sch.get(sch.get_block("Y")).iter_vars]
    [48, 16, 144]
    >>> sch.block_names()
    ['X_pad', 'X_pad_reindex', 'W_reindex', 'X_pad_reindex_pad', 'Y', 'Y_reindex_pad', 'Y_reindex']
    """
    block = sch.get_block(name)
    node = sch.get(block)
    roles = gemm_roles(node)
    if isinstance(roles, str):
        raise ScheduleError(roles, node)
    order = [[iv.var for iv in node.iter_vars if roles.get(iv.var) == role] for role in ROLES]
    if not _is_plain_gemm(node, order):
        _reindex_to_gemm(sch, block, node, roles, bool(order[0]))
    extents = [_extent(iv.dom.extent) for iv in sch.get(block).iter_vars]
    tiles = [1] * (len(extents) - 3) + list(UNITS[target.kind][0])
    factors = [tile if extent % tile else 1 for extent, tile in zip(extents, tiles)]
    if any(f > 1 for f in factors):
        sch.pad_einsum(block, factors)


def tensor_core_gemm_gpu(sch: Schedule, name: str, target: Target) -> None:
    """The tensor-core rule on a block in GEMM form: tile and tensorize it (``tensor_core_gpu``), then
    fold its input copies into the shared-memory fetches."""
    stages = read_stages(sch, name)
    tensor_core_gpu(sch, name, target)
    for stage in stages:
        sch.compute_inline(sch.get_block(stage))


def read_stages(sch: Schedule, name: str) -> list[str]:
    """The spatial blocks that feed block ``name`` through intermediate buffers (the copies
    ``to_gemm_form`` makes, and what they read from), nearest first; records nothing."""
    params = set(sch.func.buffer_params)
    found: list[str] = []
    frontier = [sch.find_block(name)]
    while frontier:
        node = frontier.pop(0)
        for producer in _producers(sch, node):
            writes_param = any(w.buffer in params for w in producer.writes)
            if is_spatial(producer) and not writes_param and producer.name not in found:
                found.append(producer.name)
                frontier.append(producer)
    return found


# ---------------------------------------------------------------- the rewrite


def _reindex_to_gemm(
    sch: Schedule, block: BlockRV, node: Block, roles: dict[Var, str], batched: bool
) -> None:
    """Stage A, B and C through reindexed buffers laid out ``[batch?, rows, cols]`` and fuse the block's
    iterators to ``(batch?, M, N, K)``; the input copies are relabelled the same way."""
    batch = ("batch",) if batched else ()
    extents = {iv.var: _extent(iv.dom.extent) for iv in node.iter_vars}
    layouts = (("read", 0, ("m", "k")), ("read", 1, ("k", "n")), ("write", 0, ("m", "n")))
    copies = [sch.reindex(block, (kind, index)) for kind, index, _ in layouts]
    staged = sch.get(block)
    for (kind, index, axes), copy in zip(layouts, copies):
        regions = staged.reads if kind == "read" else staged.writes
        axis_vars = _access_vars(staged, regions[index].buffer)
        layout = _fusing_map(axis_vars, roles, extents, (*batch, *axes))
        sch.transform_layout(block, (kind, index), layout)
        if kind == "read":
            sch.transform_block_layout(copy, layout)
    block_map = _fusing_map([iv.var for iv in node.iter_vars], roles, extents, (*batch, "m", "n", "k"))
    sch.transform_block_layout(block, block_map)


def _fusing_map(axis_vars: list[Var], roles: dict[Var, str], extents: dict[Var, int], outputs) -> IndexMap:
    """The map from ``axis_vars`` to one fused index per role in ``outputs`` (row-major over the axes of
    that role, in their order); unit axes map nowhere."""
    fresh = [Var(f"v{i}", v.dtype) for i, v in enumerate(axis_vars)]
    finals: list[PrimExpr] = []
    for role in outputs:
        fused: PrimExpr = const(0, axis_vars[0].dtype)
        for var, new in zip(axis_vars, fresh):
            if roles.get(var) == role:
                fused = fused * extents[var] + new
        finals.append(fused)
    return IndexMap(tuple(fresh), tuple(finals))


# ---------------------------------------------------------------- reading the block


def _is_plain_gemm(block: Block, order) -> bool:
    """Iterators exactly ``(batch?, m, n, k)`` with every access the plain iterators in GEMM order."""
    batch, m, n, k = order
    if len(batch) > 1 or not (len(m) == len(n) == len(k) == 1):
        return False
    if [iv.var for iv in block.iter_vars] != [*batch, *m, *n, *k]:
        return False
    out = block.writes[0].buffer
    inputs = list(dict.fromkeys(r.buffer for r in block.reads if r.buffer is not out))
    expected = ([*batch, *m, *k], [*batch, *k, *n], [*batch, *m, *n])
    return all(_access_vars(block, b) == e for b, e in zip((*inputs, out), expected))


def _access_vars(block: Block, buffer) -> list[Var] | None:
    """The iterators ``block`` indexes ``buffer`` by, when every index is a plain iterator."""
    for region in (*block.reads, *block.writes):
        if region.buffer is buffer:
            mins = [r.min for r in region.region]
            return list(mins) if all(isinstance(m, Var) for m in mins) else None
    return None


def _region_vars(block: Block, buffer) -> set[Var]:
    """The variables in ``block``'s regions of ``buffer``."""
    found: set[Var] = set()
    for region in (*block.reads, *block.writes):
        if region.buffer is buffer:
            for rng in region.region:
                found |= set(collect_vars(rng.min))
    return found


def _producers(sch: Schedule, node: Block) -> list[Block]:
    """The blocks at the root that write a buffer ``node`` reads (records nothing, unlike
    ``get_producers``)."""
    reads = {r.buffer for r in node.reads}
    return [
        b
        for n in sch.block_names()
        if (b := sch.find_block(n)) is not node and {w.buffer for w in b.writes} & reads
    ]


def _extent(expr: IntImm) -> int:
    return expr.value
