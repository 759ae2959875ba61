"""Lookup primitives: get_block, get_loops, get_child_blocks, get_producers, get_consumers,
get_output_blocks, and remove_rv, which forgets a handle.

They change nothing, but they are traced like every primitive, because the
handles they return (or forget) are what later instructions refer to.
"""

from __future__ import annotations

import difflib

from tir import Block, BufferStore, For
from tir.functor import post_order_visit

from .analysis import child_blocks, consumers_of, producers_of, realizes_under, writes_outside_scope
from .errors import FORGOTTEN_BY_REMOVE_RV, ArgumentError, BlockNameNotFoundError, NotFoundError, describe
from .instruction import BlockRV, ExprRV, LoopRV, primitive
from .state import ScheduleState, StateIndex

# ---------------------------------------------------------------- primitives


def _stored_outside_blocks(body) -> set[str]:
    """Names of the buffers stored to outside every block but the root (parsed from a script that
    wrote ``B[i] = ...`` without ``with T.block``)."""
    everywhere, in_blocks = [], set()

    def visit(node) -> None:
        if isinstance(node, BufferStore):
            everywhere.append(node)
        elif isinstance(node, Block) and node.name != "root":
            for part in (node.body, node.init):
                if part is not None:
                    post_order_visit(part, lambda inner: in_blocks.add(id(inner)))

    post_order_visit(body, visit)
    return {store.buffer.name for store in everywhere if id(store) not in in_blocks}


@primitive()
def get_block(state: ScheduleState, name: str, func_name: str | None = None) -> Block:
    func_name = func_name or state.func_name
    if func_name not in state.mod:
        raise NotFoundError(f"there is no function {func_name!r}; the module has {', '.join(state.mod)}")
    index = state.index if func_name == state.func_name else StateIndex(state.mod[func_name])
    block = index.blocks.get(name)
    count = index.name_counts.get(name, 0)
    if count > 1:
        raise NotFoundError(
            f"Found {count} blocks with the name: {name!r} in function {func_name!r}; a handle names one "
            "block, so get_block needs names that are unique (TVM allows repeats but cannot pick one "
            "either): rename the blocks in the script"
        )
    if block is None:
        names = [n for n in index.blocks if n != "root"]
        close = difflib.get_close_matches(name, names, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else f" Blocks: {', '.join(names)}." if names else ""
        outside = _stored_outside_blocks(state.mod[func_name].body)
        if outside and (not names or name in outside):
            hint += (
                f" {', '.join(sorted(outside))} {'is' if len(outside) == 1 else 'are'} written outside any "
                "T.block (a store such as `B[i] = ...` directly under a loop), which a schedule cannot "
                'name: wrap the store in `with T.block("B"):` with `vi = T.axis.spatial(8, i)` iterators.'
            )
        raise BlockNameNotFoundError(
            f"Cannot find a block with the name: {name}; no block named {name!r} in function "
            f"{func_name!r}.{hint}"
        )
    state.func_name = func_name
    return block


@primitive()
def get_loops(state: ScheduleState, block: Block) -> list[For]:
    return state.loops_of(block)


@primitive()
def get_child_blocks(state: ScheduleState, block_or_loop: Block | For) -> list[Block]:
    return child_blocks(block_or_loop)


@primitive()
def get_producers(state: ScheduleState, block: Block) -> list[Block]:
    """Blocks in the same scope that write a buffer ``block`` reads, before it."""
    return producers_of(state, block)


@primitive()
def get_consumers(state: ScheduleState, block: Block) -> list[Block]:
    """Blocks in the same scope that read a buffer ``block`` writes, after it."""
    return consumers_of(state, block)


@primitive()
def get_output_blocks(state: ScheduleState, scope_block: Block | str = "root") -> list[Block]:
    """Blocks under ``scope_block`` (nested ones too) that write a buffer their scope does not
    allocate: a function parameter, or a buffer of an outer scope (TVM's IsOutputBlock)."""
    if isinstance(scope_block, str):
        found = state.index.blocks.get(scope_block)
        if found is None:
            raise NotFoundError(
                f"Cannot find a block with the name: {scope_block} in function {state.func_name!r} "
                f"to look for output blocks in. Blocks: {', '.join(state.index.blocks)}."
            )
        scope_block = found
    if not isinstance(scope_block, Block):
        raise ArgumentError(
            f"get_output_blocks needs a block handle or a block's name for argument 'scope_block', got "
            f"{describe(scope_block)}",
            *([scope_block] if isinstance(scope_block, For) else []),
        )
    return [r.block for r in realizes_under(scope_block.body) if writes_outside_scope(state, r.block)]


# ---------------------------------------------------------------- public methods


@primitive()
def remove_rv(state: ScheduleState, rv) -> None:
    """Nothing to rewrite: the schedule forgets the handle after this checks that it is valid."""


_EXAMPLE = """
>>> sch = Schedule(tir.parse('''
... @T.prim_func
... def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
...     C = T.alloc_buffer((8, 8))
...     for i, j in T.grid(8, 8):
...         with T.block("C"):
...             vi, vj = T.axis.remap("SS", [i, j])
...             C[vi, vj] = A[vi, vj] * T.float32(2)
...     for i, j in T.grid(8, 8):
...         with T.block("B"):
...             vi, vj = T.axis.remap("SS", [i, j])
...             B[vi, vj] = C[vi, vj] + T.float32(1)
... '''))
"""


class GetMethods:
    def get_block(self, name: str, func_name: str | None = None) -> BlockRV:
        """The block named ``name`` in ``func_name`` (default: the function worked on).

        Parameters
        ----------
        name : the block's name, as in ``with T.block("C")``.
        func_name : the function holding it; later primitives work on that function.

        Returns
        -------
        A handle that stays valid while a block of that name exists.

        Example
        -------
        {example}
        >>> sch.get(sch.get_block("C", "main")).name
        'C'
        >>> sch.get_block("D")
        Traceback (most recent call last):
        ...
        schedule.errors.BlockNameNotFoundError: ScheduleError in get_block: Cannot find a block...: D...
        <BLANKLINE>
        ...
        """
        return self._run("get_block", name=name, func_name=func_name)

    def get_loops(self, block: BlockRV) -> list[LoopRV]:
        """The loops around ``block``, outermost first, up to the enclosing block.

        Example
        -------
        {example}
        >>> i, j = sch.get_loops(sch.get_block("B"))
        >>> sch.get(i).extent, sch.get(j).loop_var.name
        (8, 'j')
        """
        return self._run("get_loops", block=block)

    def get_child_blocks(self, block_or_loop: BlockRV | LoopRV) -> list[BlockRV]:
        """The blocks directly inside a block or a loop, in program order.

        Example
        -------
        {example}
        >>> i, j = sch.get_loops(sch.get_block("C"))
        >>> [sch.get(b).name for b in sch.get_child_blocks(i)]
        ['C']
        """
        return self._run("get_child_blocks", block_or_loop=block_or_loop)

    def get_producers(self, block: BlockRV) -> list[BlockRV]:
        """Blocks before ``block`` in its scope that write what it reads.

        Example
        -------
        {example}
        >>> [sch.get(b).name for b in sch.get_producers(sch.get_block("B"))]
        ['C']
        """
        return self._run("get_producers", block=block)

    def get_consumers(self, block: BlockRV) -> list[BlockRV]:
        """Blocks after ``block`` in its scope that read what it writes.

        Example
        -------
        {example}
        >>> [sch.get(b).name for b in sch.get_consumers(sch.get_block("C"))]
        ['B']
        """
        return self._run("get_consumers", block=block)

    def get_output_blocks(self, scope_block: BlockRV | str = "root") -> list[BlockRV]:
        """Blocks in ``scope_block`` (a handle, or a block's name; default the root) that write a
        buffer their scope does not allocate, nested blocks included, in program order.

        ``get_output_blocks`` in TVM. Blocks that only write buffers their scope allocates
        (intermediates) are not outputs.

        Example
        -------
        {example}
        >>> [sch.get(b).name for b in sch.get_output_blocks()]
        ['B']
        """
        return self._run("get_output_blocks", scope_block=scope_block)

    def remove_rv(self, rv: BlockRV | LoopRV | ExprRV) -> None:
        """Forget a handle: later use of it is an error (TVM's ``remove_rv``).

        Example
        -------
        {example}
        >>> block = sch.get_block("B")
        >>> sch.remove_rv(block)
        >>> sch.get(block)
        Traceback (most recent call last):
        ...
        schedule.errors.UnknownHandleError: the handle was removed by remove_rv
        """
        self._run("remove_rv", rv=rv)
        del self._keys[rv]
        self._removed[rv] = FORGOTTEN_BY_REMOVE_RV


for _method in vars(GetMethods).values():
    if callable(_method) and _method.__doc__:
        _method.__doc__ = _method.__doc__.replace("{example}", _EXAMPLE.strip().replace("\n", "\n        "))
