"""TVMScript front end: the T and I namespaces, the parser and the printer.

``tir.script.parse(text)`` turns script text into a PrimFunc or IRModule;
``tir.script.prim_func`` and ``tir.script.ir_module`` are the decorators (also
``T.prim_func`` and ``I.ir_module``), so code written for ``@tvm.script.ir_module``
works as ``@tir.script.ir_module``. Names load on first use: importing the
package does not import lark.
"""

from __future__ import annotations

import importlib

_LAZY = {
    "parse": ("tir.script.parser", "parse"),
    "parse_function": ("tir.script.parser", "parse_function"),
    "parse_module": ("tir.script.parser", "parse_module"),
    "ParseError": ("tir.script.errors", "ParseError"),
    "T": ("tir.script.namespace", "T"),
    "I": ("tir.script.namespace", "I"),
    "tir": ("tir.script.namespace", "T"),
    "prim_func": ("tir.script.namespace", "prim_func"),
    "ir_module": ("tir.script.namespace", "ir_module"),
}

__all__ = sorted(_LAZY)


def __getattr__(name: str):
    if name in _LAZY:
        module_name, attr = _LAZY[name]
        value = getattr(importlib.import_module(module_name), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tir.script' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_LAZY))
