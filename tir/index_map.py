"""IndexMap: a function from one index space to another, as TVM's ``tir.IndexMap``.

Layout primitives (``transform_layout``, ``transform_block_layout``) take an index
map, which users write as a Python function of the indices, e.g.
``lambda i, j: (i // 16, j // 16, i % 16, j % 16)``. ``IndexMap.from_func`` calls
it once on fresh ``Var``s, so the map is just its input variables and the output
expressions. Its text form is that lambda (``str(index_map)``), which is what
traces store; ``IndexMap.parse`` reads the text back by walking Python's syntax
tree over a small whitelist (names, integers, + - * // %, ``T.int32(n)`` /
``T.int64(n)``), so replaying a trace never runs code.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .arith import Analyzer
from .expr import IntImm, PrimExpr, Var, const
from .functor import substitute


class IndexMapError(ValueError):
    """An index map that cannot be built: a function that does not return indices, bad text."""


@dataclass(frozen=True, eq=False)
class IndexMap:
    """``initial_indices -> final_indices``: each output index an expression of the input Vars."""

    initial_indices: tuple[Var, ...]
    final_indices: tuple[PrimExpr, ...]

    # TVM's marker in a map's outputs, ``lambda i, j: [i, IndexMap.AXIS_SEPARATOR, j]``: a new
    # physical axis starts there (``from_func_with_separators`` reads it).
    AXIS_SEPARATOR = "axis_separator"

    @staticmethod
    def from_func(func: Callable, ndim: int | None = None, dtype: str = "int32") -> IndexMap:
        """The map ``func`` computes; ``ndim`` gives ``*indices`` parameters their count.

        >>> str(IndexMap.from_func(lambda i, j: (j, i)))
        'lambda i, j: (j, i)'
        >>> str(IndexMap.from_func(lambda *rest, k: (*rest, k // 4, k % 4), ndim=3))
        'lambda i0, i1, k: (i0, i1, k // 4, k % 4)'
        """
        params = list(inspect.signature(func).parameters.values())
        star = [p for p in params if p.kind is inspect.Parameter.VAR_POSITIONAL]
        named = [p for p in params if p.kind is not inspect.Parameter.VAR_POSITIONAL]
        if star and ndim is None:
            raise IndexMapError("an index map with *indices needs the number of dimensions (ndim)")
        n_star = (ndim - len(named)) if star else 0
        if n_star < 0 or (ndim is not None and len(named) + n_star != ndim):
            raise IndexMapError(
                f"the index map takes {len(named)} indices, but the buffer or block has {ndim} dimensions"
            )
        star_vars = [Var(f"i{n}", dtype) for n in range(n_star)]
        args, kwargs, inputs = [], {}, []
        for p in params:
            if p.kind is inspect.Parameter.VAR_POSITIONAL:
                args.extend(star_vars)
                inputs.extend(star_vars)
            elif p.kind is inspect.Parameter.KEYWORD_ONLY:
                kwargs[p.name] = Var(p.name, dtype)
                inputs.append(kwargs[p.name])
            else:
                args.append(Var(p.name, dtype))
                inputs.append(args[-1])
        result = func(*args, **kwargs)
        if not isinstance(result, (list, tuple)):
            result = (result,)
        if any(r is IndexMap.AXIS_SEPARATOR for r in result):
            raise IndexMapError(
                "the index map marks axis separators; read it with IndexMap.from_func_with_separators"
            )
        return IndexMap(tuple(inputs), _as_indices(result, dtype))

    @staticmethod
    def from_func_with_separators(
        func: Callable, ndim: int | None = None, dtype: str = "int32"
    ) -> tuple[IndexMap, list[int]]:
        """The map ``func`` computes without its ``IndexMap.AXIS_SEPARATOR`` markers, and where they
        stood (output positions), as TVM's function of this name.

        >>> m, seps = IndexMap.from_func_with_separators(lambda i, j: [i, IndexMap.AXIS_SEPARATOR, j])
        >>> str(m), seps
        ('lambda i, j: (i, j)', [1])
        """
        separators: list[int] = []

        def without_markers(*args, **kwargs):
            result = func(*args, **kwargs)
            outputs = []
            for r in result if isinstance(result, (list, tuple)) else (result,):
                if r is IndexMap.AXIS_SEPARATOR:
                    separators.append(len(outputs))
                else:
                    outputs.append(r)
            return outputs

        without_markers.__signature__ = inspect.signature(func)
        return IndexMap.from_func(without_markers, ndim, dtype), separators

    @staticmethod
    def parse(text: str, dtype: str = "int32") -> IndexMap:
        """Read the text ``str(index_map)`` gives (a lambda) without running it.

        >>> m = IndexMap.parse("lambda i, j: (i // 16, j % 16 * 2)")
        >>> [str(e) for e in m.map_indices([37, 5])]
        ['2', '10']
        """
        try:
            tree = ast.parse(text.strip(), mode="eval").body
        except SyntaxError as err:
            raise IndexMapError(f"index map {text!r} is not a lambda: {err.msg}") from err
        if not isinstance(tree, ast.Lambda) or tree.args.vararg or tree.args.kwonlyargs:
            raise IndexMapError(f"index map {text!r} must be a lambda of plain index names")
        inputs = tuple(Var(a.arg, dtype) for a in tree.args.args)
        names = {v.name: v for v in inputs}
        body = tree.body.elts if isinstance(tree.body, (ast.Tuple, ast.List)) else [tree.body]
        return IndexMap(inputs, _as_indices([_expr_of(node, names, text) for node in body], dtype))

    def map_indices(
        self, indices: Sequence[PrimExpr | int], analyzer: Analyzer | None = None
    ) -> tuple[PrimExpr, ...]:
        """The output indices for these input indices, simplified by ``analyzer`` (which may know
        the ranges of the variables in ``indices``)."""
        if len(indices) != len(self.initial_indices):
            raise IndexMapError(
                f"index map {self} takes {len(self.initial_indices)} indices, got {len(indices)}"
            )
        vmap = {v: const(i, v.dtype) for v, i in zip(self.initial_indices, indices)}
        analyzer = analyzer or Analyzer()
        return tuple(analyzer.simplify(substitute(e, vmap)) for e in self.final_indices)

    def __str__(self) -> str:
        from .script.printer import expr_to_str

        names = ", ".join(v.name for v in self.initial_indices)
        outputs = ", ".join(expr_to_str(e) for e in self.final_indices)
        comma = "," if len(self.final_indices) == 1 else ""
        return f"lambda {names}: ({outputs}{comma})"

    def __repr__(self) -> str:
        return f"IndexMap({self})"


def _as_indices(values, dtype: str) -> tuple[PrimExpr, ...]:
    out = []
    for value in values:
        if isinstance(value, bool) or not isinstance(value, (int, PrimExpr)):
            raise IndexMapError(f"an index map must return index expressions, got {value!r}")
        out.append(const(value, dtype) if isinstance(value, int) else value)
    return tuple(out)


_BINARY = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
}


def _expr_of(node: ast.AST, names: dict[str, Var], text: str) -> PrimExpr:
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return const(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _expr_of(node.left, names, text), _expr_of(node.right, names, text)
        if isinstance(left, IntImm) and not isinstance(right, IntImm):
            left = const(left.value, right.dtype)
        if isinstance(right, IntImm) and not isinstance(left, IntImm):
            right = const(right.value, left.dtype)
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _expr_of(node.operand, names, text)
        return const(0, inner.dtype) - inner
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("int32", "int64")
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Constant)
        and type(node.args[0].value) is int
    ):
        return const(node.args[0].value, node.func.attr)
    raise IndexMapError(f"index map {text!r}: can't read {ast.unparse(node)!r} (only + - * // % of indices)")
