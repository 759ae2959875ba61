"""The reference executor: ``tir.interpret(func_or_mod, *arrays, **scalars)``.

Runs any PrimFunc (TensorIR with blocks, or lowered IR) on numpy arrays in place,
with serial semantics: every loop, whatever its kind or thread binding, is a plain
loop. It is the oracle that schedule, codegen and tuner tests compare against.
The function is translated once into Python source (:mod:`tir.interpret.emit`),
compiled, and cached per PrimFunc object; each call checks the arguments against
the signature before any work, binds symbolic shapes from the arrays, and runs
the compiled code over flat memoryviews of the arrays. Values are computed in
Python floats and ints (double precision) and rounded to the buffer's dtype when
stored (bfloat16 and float16 round to nearest even on every store). numpy has no
bfloat16: a bfloat16 buffer takes a uint16 array of bit patterns or an
``ml_dtypes.bfloat16`` array (both in place), or a float32 array, rounded on the way
in and, when the function writes it, given back holding bfloat16 values (tir/bfloat16.py).
"""

from __future__ import annotations

import linecache
import sys
import threading
import types
from collections import OrderedDict

import numpy as np

from .. import dtype as _dt
from ..arith.const_bound import ConstIntBound, const_int_bound
from ..bfloat16 import bfloat16_argument
from ..buffer import Buffer
from ..expr import IntImm, PrimExpr, Var
from ..function import PrimFunc, resolve_function
from ..functor import post_order_visit
from ..stmt import BufferStore
from .emit import compile_func
from .runtime import BindingError, IRError, OutOfBoundsError, storage_format

__all__ = ["interpret", "python_source", "ArgumentError", "BindingError", "IRError", "OutOfBoundsError"]


class ArgumentError(TypeError, ValueError):
    """An argument does not match the function's signature (count, type, dtype, shape, layout)."""


class _Compiled:
    """A PrimFunc's generated kernel and what is needed to call it."""

    def __init__(self, func: PrimFunc):
        generated = compile_func(func)
        self.func = func
        self.source = generated.source
        self.signature = generated.signature
        self.written = _written_buffers(func)
        self.filename = f"<tir.interpret {func.name} {id(func):x}>"
        # Registered so that tracebacks through generated code show its lines.
        linecache.cache[self.filename] = (len(self.source), None, self.source.splitlines(True), self.filename)
        namespace = generated.namespace
        exec(compile(self.source, self.filename, "exec"), namespace)
        self.kernel = namespace["_kernel"]


_CACHE_SIZE = 256
_cache: OrderedDict[int, _Compiled] = OrderedDict()
_cache_lock = threading.Lock()


def _compiled(func: PrimFunc) -> _Compiled:
    # Keyed by id with the function kept alive inside the entry, so an id cannot be
    # reused while cached; PrimFuncs (slotted) cannot be weakly referenced.
    with _cache_lock:
        entry = _cache.get(id(func))
        if entry is not None and entry.func is func:
            _cache.move_to_end(id(func))
            return entry
    entry = _Compiled(func)
    with _cache_lock:
        _cache[id(func)] = entry
        while len(_cache) > _CACHE_SIZE:
            _, evicted = _cache.popitem(last=False)
            linecache.cache.pop(evicted.filename, None)
    return entry


def _written_buffers(func: PrimFunc) -> set[Buffer]:
    written: set[Buffer] = set()
    post_order_visit(func.body, lambda n: written.add(n.buffer) if isinstance(n, BufferStore) else None)
    return written


def python_source(func_or_mod, func_name: str | None = None) -> str:
    """The Python source the executor generated for a function (for debugging)."""
    return _compiled(resolve_function(func_or_mod, func_name)).source


def interpret(func_or_mod, *arrays, func_name: str | None = None, **scalars) -> None:
    """Run a PrimFunc (or an IRModule's "main") on numpy arrays, in place.

    Arguments follow the function's parameters: a C-contiguous numpy array of the
    exact dtype and shape for each buffer, a number for each scalar parameter
    (scalars may also be given by keyword). Symbolic dimensions are bound from the
    arrays' shapes. Everything is checked before anything runs.
    """
    func = resolve_function(func_or_mod, func_name)
    compiled = _compiled(func)
    binder = _Binder(func, compiled)
    args = binder.bind(arrays, scalars)
    try:
        compiled.kernel(*args)
    except ZeroDivisionError as error:
        raise ZeroDivisionError(f"integer division by zero while running '{func.name}'") from error
    for write_back in binder.write_backs:
        write_back()


# ---------------------------------------------------------------- argument checking


def _describe_param(param) -> str:
    if isinstance(param, Buffer):
        shape = ", ".join(_dim_text(d) for d in param.shape)
        return f"{param.name}: {param.dtype}[{shape}]"
    return f"{param.name}: {param.dtype}"


def _dim_text(dim: PrimExpr) -> str:
    return str(dim.value) if isinstance(dim, IntImm) else repr(dim)


class _Binder:
    """Matches call arguments to a function's parameters and binds its shape variables."""

    def __init__(self, func: PrimFunc, compiled: _Compiled):
        self.func = func
        self.compiled = compiled
        self.values: dict[Var, int | float] = {}
        self.origin: dict[Var, str] = {}
        self.storage: dict[Buffer, np.ndarray] = {}
        self.write_backs: list = []

    def bind(self, arrays: tuple, scalars: dict) -> list:
        params = self.func.params
        by_name = {p.name: p for p in params if isinstance(p, Var)}
        unknown = [name for name in scalars if name not in by_name]
        if unknown:
            known = ", ".join(by_name) or "none"
            raise ArgumentError(
                f"'{self.func.name}' has no scalar parameter {unknown[0]!r} (its scalar parameters: {known})"
            )
        positional = [p for p in params if not (isinstance(p, Var) and p.name in scalars)]
        if len(arrays) != len(positional):
            expected = ", ".join(_describe_param(p) for p in positional)
            raise ArgumentError(
                f"'{self.func.name}' takes {len(positional)} positional argument(s) ({expected}), "
                f"got {len(arrays)}"
            )
        given = {p: a for p, a in zip(positional, arrays)}
        given.update({by_name[name]: value for name, value in scalars.items()})
        for position, param in enumerate(params):
            if isinstance(param, Var):
                self._bind_scalar(position, param, given[param])
        for position, param in enumerate(params):
            if isinstance(param, Buffer):
                self._check_array(position, param, given[param])
        for position, param in enumerate(params):
            if isinstance(param, Buffer):
                self._check_shape(position, param, given[param])
        return [self._argument(item, given) for item in self.compiled.signature]

    def _argument(self, item, given: dict):
        if isinstance(item, Buffer):
            array = self.storage.get(item, given[item])
            return memoryview(array).cast("B").cast(storage_format(item.dtype))
        if item not in self.values:
            raise ArgumentError(
                f"cannot infer the value of {item.name} from the arguments of '{self.func.name}'"
            )
        return self.values[item]

    def _where(self, position: int, param) -> str:
        return f"argument {position} ({param.name})"

    def _bind_scalar(self, position: int, var: Var, value) -> None:
        where = self._where(position, var)
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value.item()
        if isinstance(value, np.generic):
            value = value.item()
        if _dt.is_float(var.dtype):
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            value = float(value) if ok else value
        elif _dt.is_bool(var.dtype):
            ok = isinstance(value, bool)
        else:
            ok = isinstance(value, int) and not isinstance(value, bool)
        if not ok:
            raise ArgumentError(f"{where} must be a {var.dtype} number, got {type(value).__name__} {value!r}")
        self.values[var] = value
        self.origin[var] = where

    def _check_array(self, position: int, buffer: Buffer, array) -> None:
        where = self._where(position, buffer)
        expected = _describe_param(buffer)
        if not isinstance(array, np.ndarray):
            raise ArgumentError(
                f"{where} must be a numpy array ({expected}), got {type(array).__name__}; "
                "wrap it with np.asarray(..., dtype=...)"
            )
        if buffer.dtype == "bfloat16":
            self._bfloat16_storage(where, buffer, array)
        elif array.dtype != np.dtype(buffer.dtype):
            raise ArgumentError(
                f"{where} has dtype {array.dtype} but '{self.func.name}' expects {buffer.dtype} "
                f"({expected}); convert it with .astype({buffer.dtype!r}) (the executor never casts silently)"
            )
        if array.ndim != len(buffer.shape):
            raise ArgumentError(
                f"{where} has shape {array.shape} ({array.ndim} dimensions) but '{self.func.name}' "
                f"expects {len(buffer.shape)} dimensions ({expected})"
            )
        if not array.flags.c_contiguous:
            raise ArgumentError(f"{where} is not C-contiguous; pass np.ascontiguousarray(...) instead")
        if buffer in self.compiled.written and not array.flags.writeable:
            raise ArgumentError(f"{where} is read-only but '{self.func.name}' writes to it")
        for dim, size in zip(buffer.shape, array.shape):
            if isinstance(dim, Var) and dim not in self.values:
                self.values[dim] = int(size)
                self.origin[dim] = where

    def _bfloat16_storage(self, where: str, buffer: Buffer, array: np.ndarray) -> None:
        try:
            bits, write_back = bfloat16_argument(array)
        except TypeError as error:
            raise ArgumentError(f"{where} of '{self.func.name}': {error}") from None
        self.storage[buffer] = bits
        if write_back is not None and buffer in self.compiled.written:
            self.write_backs.append(write_back)

    def _check_shape(self, position: int, buffer: Buffer, array: np.ndarray) -> None:
        expected = tuple(self._evaluate(dim) for dim in buffer.shape)
        if expected != array.shape:
            where = self._where(position, buffer)
            bound = {v: self.origin[v] for v in self._vars_in(buffer.shape) if v in self.origin}
            note = "".join(f"; {v.name} = {self.values[v]} from {origin}" for v, origin in bound.items())
            raise ArgumentError(
                f"{where} has shape {array.shape} but '{self.func.name}' expects "
                f"({', '.join(_dim_text(d) for d in buffer.shape)}) = {expected}{note}"
            )

    def _vars_in(self, dims) -> list[Var]:
        found: dict[Var, None] = {}
        for dim in dims:
            post_order_visit(dim, lambda n: found.setdefault(n) if isinstance(n, Var) else None)
        return list(found)

    def _evaluate(self, dim: PrimExpr) -> int:
        if isinstance(dim, IntImm):
            return dim.value
        missing = [v.name for v in self._vars_in([dim]) if v not in self.values]
        if missing:
            raise ArgumentError(
                f"cannot infer {', '.join(missing)} in the shape {dim!r} "
                f"from the arguments of '{self.func.name}'"
            )
        return _evaluate_int(dim, self.values)


def _evaluate_int(expr: PrimExpr, values: dict[Var, int]) -> int:
    """The value of an integer shape expression once its variables are known."""
    bound = const_int_bound(expr, {v: ConstIntBound(x, x) for v, x in values.items() if isinstance(x, int)})
    if not bound.is_const:
        raise ArgumentError(f"cannot evaluate the shape expression {expr!r} from the arguments")
    return bound.min_value


def _make_module_callable() -> None:
    """Let ``tir.interpret(...)`` work even once ``import tir.interpret`` has bound the
    package itself to that attribute of ``tir`` (Python's import system does so)."""

    class _CallableModule(types.ModuleType):
        def __call__(self, *args, **kwargs):
            return interpret(*args, **kwargs)

    sys.modules[__name__].__class__ = _CallableModule


_make_module_callable()
