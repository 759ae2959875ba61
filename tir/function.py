"""PrimFunc (one tensor program) and IRModule (named PrimFuncs).

A PrimFunc's parameters are Buffers (tensor arguments) or Vars (scalar
arguments). Its body is a ``BlockRealize`` of the implicit "root" block while
the function is in TensorIR form, and plain statements once lowered.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from .buffer import Buffer
from .expr import Var
from .stmt import Stmt


class _Printable:
    __slots__ = ()

    def script(self) -> str:
        from .script.printer import to_script

        return to_script(self)

    def show(self, style: str | None = None, loops_only: bool = False) -> None:
        """Print the script, highlighted in a terminal; rich HTML in Jupyter.

        ``loops_only=True`` prints only the loop nest, one line per loop and per
        computing block, as Halide's ``print_loop_nest`` does (tir/script/loop_nest.py).
        """
        if loops_only:
            from .script.loop_nest import loop_nest

            print(loop_nest(self))
            return
        from .script.highlight import show

        show(self, style=style)

    def _repr_html_(self) -> str:
        from .script.highlight import to_html

        return to_html(self.script())

    def __str__(self) -> str:
        return self.script()

    def same_as(self, other) -> bool:
        """TVM's reference equality: the very same object (``structural_equal`` compares contents)."""
        return self is other


@dataclass(frozen=True, slots=True, eq=False)
class PrimFunc(_Printable):
    params: tuple[Buffer | Var, ...]
    body: Stmt
    attrs: dict = field(default_factory=dict)
    name: str = "main"

    @property
    def buffer_params(self) -> tuple[Buffer, ...]:
        return tuple(p for p in self.params if isinstance(p, Buffer))

    @property
    def buffer_map(self) -> dict[Buffer, Buffer]:
        """TVM's ``func.buffer_map[func.params[i]]``: our buffer parameters are their own buffers.

        >>> f.buffer_map[f.params[0]] is f.params[0]   # doctest: +SKIP
        True
        """
        return {p: p for p in self.buffer_params}

    def with_body(self, body: Stmt) -> PrimFunc:
        return self if body is self.body else replace(self, body=body)

    def with_attr(self, key: str, value) -> PrimFunc:
        """A copy with attribute ``key`` set (TVM's ``func.with_attr("global_symbol", "main")``)."""
        return replace(self, attrs={**self.attrs, key: value})

    def __repr__(self) -> str:
        return f"PrimFunc({self.name})"


@dataclass(frozen=True, slots=True, eq=False)
class IRModule(_Printable):
    functions: dict[str, PrimFunc]
    name: str = "Module"

    def __getitem__(self, name: str) -> PrimFunc:
        try:
            return self.functions[name]
        except KeyError:
            known = ", ".join(self.functions) or "none"
            raise KeyError(f"no function {name!r} in the module; it has: {known}") from None

    def __contains__(self, name: str) -> bool:
        return name in self.functions

    def __iter__(self):
        return iter(self.functions)

    def main_name(self) -> str:
        """The name of the module's main function: "main" when there is one, else its only function.

        This is the one rule for "which function is main" (schedules, the tuner, the measurer,
        the CLI and ``resolve_function`` all use it). A module of several functions without a
        "main" has none: ValueError, naming them.

        >>> IRModule({"add": f, "main": g}).main_name()  # doctest: +SKIP
        'main'
        >>> IRModule({"add": f}).main_name()  # doctest: +SKIP
        'add'
        """
        if "main" in self.functions:
            return "main"
        if len(self.functions) == 1:
            return next(iter(self.functions))
        if not self.functions:
            raise ValueError("the module has no functions, so it has no main function")
        raise ValueError(
            f"the module has functions {', '.join(self.functions)} and none is called 'main'; "
            "name the one to use 'main' (or pass its name, e.g. func_name=)"
        )

    def get_global_var(self, name: str) -> str:
        """TVM's handle of a function of the module; here its name (checked to exist)."""
        self[name]  # noqa: B018 - raises a KeyError listing the functions
        return name

    def main_function(self) -> PrimFunc:
        """The function named by :meth:`main_name`."""
        return self.functions[self.main_name()]

    @staticmethod
    def from_expr(func: PrimFunc) -> IRModule:
        """TVM's ``IRModule.from_expr``: a module whose "main" is ``func``."""
        return IRModule({"main": replace(func, name="main")})

    def with_function(self, name: str, func: PrimFunc) -> IRModule:
        functions = dict(self.functions)
        functions[name] = func
        return replace(self, functions=functions)

    def __repr__(self) -> str:
        return f"IRModule({', '.join(self.functions)})"

    @staticmethod
    def from_func(func: PrimFunc) -> IRModule:
        return IRModule({func.name: func})


def resolve_function(func_or_mod: PrimFunc | IRModule, func_name: str | None = None) -> PrimFunc:
    """The PrimFunc to run or analyse: the function itself, or a module's ``func_name``,
    else its main function (``IRModule.main_name``: "main", else its only function)."""
    if isinstance(func_or_mod, PrimFunc):
        return func_or_mod
    if not isinstance(func_or_mod, IRModule):
        raise TypeError(f"expected a PrimFunc or an IRModule, got {type(func_or_mod).__name__}")
    if func_name is not None:
        return func_or_mod[func_name]
    return func_or_mod.main_function()
