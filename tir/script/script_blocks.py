"""Blocks of TVMScript: the body of ``with T.block(name)`` and the function's root block.

``BlockFrames`` is a mixin of ``_FunctionBuilder`` (script_builder.py), whose ``frames`` stack
it reads. A block's body fills a ``_BlockFrame`` (script_values.py): its iterators
(script_scope.py), its ``T.init()`` body, and the directives ``T.reads``, ``T.writes``,
``T.where`` and ``T.block_attr`` (script_calls.py), each allowed once and only directly inside
the block. Regions left unwritten are inferred from the body (tir/analysis/block_access.py).
A TensorIR function body is wrapped in the block named "root", which also holds the buffers
allocated outside any block.
"""

from __future__ import annotations

from dataclasses import replace

from lark import Tree

from ..analysis.well_formed import binding_problem, loop_bound
from ..arith.const_bound import ConstIntBound
from ..expr import IntImm, PrimExpr, Var
from ..stmt import Block, BlockRealize, Evaluate, Stmt
from .script_values import _BlockFrame, _Directive, _noop


class BlockFrames:
    """Builds blocks from their frames, and the root block around the function body."""

    def _root(self, stmt: Stmt | None) -> Stmt:
        """TensorIR bodies live in a block named "root"; block-free (lowered) bodies stay as they are."""
        if self.explicit_root is not None:
            if stmt is not self.explicit_root:
                raise self.error(None, 'with T.block("root") must be the whole function body')
            if not self.root_allocs:
                return stmt
            block = stmt.block
            return replace(
                stmt, block=replace(block, alloc_buffers=(*self.root_allocs, *block.alloc_buffers))
            )
        body = stmt if stmt is not None else _noop()
        if not self.block_names and not self.root_allocs:
            return body
        root = Block("root", (), (), (), body, alloc_buffers=tuple(self.root_allocs))
        return BlockRealize((), IntImm(1, "bool"), root)

    def _block(self, name: str, body: Tree, node: Tree) -> Stmt | None:
        at_top = not self.frames
        if name == "root" and not at_top:
            raise self.error(node, 'the block name "root" is reserved for the outermost block of a function')
        self.block_names.add(name)
        frame = _BlockFrame(name)
        self.frames.append(frame)
        stmt = self._suite(body)
        self.frames.pop()
        block = Block(
            name,
            tuple(frame.iter_vars),
            frame.reads or (),
            frame.writes or (),
            stmt if stmt is not None else _noop(),
            frame.init,
            tuple(frame.alloc_buffers),
            frame.annotations,
        )
        predicate = frame.predicate if frame.predicate is not None else IntImm(1, "bool")
        self._check_bindings(frame, predicate)
        if name == "root" and at_top:
            self.explicit_root = BlockRealize((), predicate, block)
            return self.explicit_root
        if frame.reads is None or frame.writes is None:
            from ..analysis.block_access import infer_access_regions

            reads, writes = infer_access_regions(block)
            block = replace(
                block,
                reads=frame.reads if frame.reads is not None else reads,
                writes=frame.writes if frame.writes is not None else writes,
            )
        return BlockRealize(tuple(frame.iter_values), predicate, block)

    def _check_bindings(self, frame: _BlockFrame, predicate: PrimExpr) -> None:
        """Each iterator's binding must stay in its domain over the loops around it, where decidable."""
        bounds: dict[Var, ConstIntBound] = {}
        for var, dom in self.loop_ranges.items():  # outer loops first: inner extents may use them
            bound = loop_bound(dom.min, dom.extent, bounds)
            if bound is not None:
                bounds[var] = bound
        for iter_var, value, node in zip(frame.iter_vars, frame.iter_values, frame.axis_nodes):
            problem = binding_problem(frame.name, iter_var, value, predicate, bounds)
            if problem is not None:
                raise self.error(node, problem)

    def _block_frame(self, what: str, node: Tree) -> _BlockFrame:
        if self.frames and isinstance(self.frames[-1], _BlockFrame):
            return self.frames[-1]
        inside = any(isinstance(frame, _BlockFrame) for frame in self.frames)
        hint = "move it to the top of the block body" if inside else 'put it in a with T.block("name"): body'
        raise self.error(node, f"{what}(...) is only valid directly inside a with T.block(...)", hint=hint)

    def _init(self, body: Tree, node: Tree) -> None:
        frame = self._block_frame("T.init", node)
        if frame.init is not None:
            raise self.error(node, f"block {frame.name!r} has two T.init() statements")
        stmt = self._nested("init", body)
        frame.init = stmt if stmt is not None else _noop()

    def _directive(self, directive: _Directive) -> Stmt | None:
        name, payload, node = directive.name, directive.payload, directive.node
        if name == "T.evaluate":
            return Evaluate(payload)
        if name == "T.func_attr":
            if self.frames:
                raise self.error(node, "T.func_attr(...) belongs at the top level of the function body")
            self.attrs.update(payload)
            return None
        frame = self._block_frame(name, node)
        if name == "T.block_attr":
            frame.annotations.update(payload)
            return None
        field_name = {"T.reads": "reads", "T.writes": "writes", "T.where": "predicate"}[name]
        if getattr(frame, field_name) is not None:
            raise self.error(node, f"{name}(...) appears twice in block {frame.name!r}")
        setattr(frame, field_name, payload)
        return None
