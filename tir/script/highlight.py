"""Syntax-highlighted display of scripts: ANSI colors in a terminal, HTML in Jupyter.

``PrimFunc.show()`` / ``IRModule.show()`` and their ``_repr_html_`` land here after the
printer has made the text. Highlighting uses pygments (a dependency), so nothing ever
asks the user to install a formatter; output that goes to a file or a pipe stays plain.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from pygments import highlight
from pygments.formatters import (
    HtmlFormatter,
    Terminal256Formatter,
    TerminalFormatter,
    TerminalTrueColorFormatter,
)
from pygments.lexers import PythonLexer

__all__ = ["show", "to_html", "to_ansi"]

HTML_STYLE = "default"
_HTML_BOX = "font-family: Menlo, Consolas, 'DejaVu Sans Mono', monospace; font-size: 13px; line-height: 1.35;"


def show(obj: Any, style: str | None = None) -> None:
    """Print ``obj``'s script: HTML in a Jupyter kernel, colored on a terminal, plain otherwise.

    ``style`` is a pygments style name ("monokai", "github-dark", ...). Without one, a
    terminal gets the 16 ANSI colors, which follow the terminal's own theme, and HTML
    gets pygments' light default.
    """
    text = obj.script() if hasattr(obj, "script") else str(obj)
    if _in_jupyter_kernel():
        from IPython.display import HTML, display

        display(HTML(to_html(text, style)))
    elif _wants_color(sys.stdout):
        sys.stdout.write(to_ansi(text, style))
    else:
        print(text)


def to_html(text: str, style: str | None = None) -> str:
    """``text`` highlighted as Python in a self-contained ``<div>`` (inline styles, no CSS classes)."""
    formatter = HtmlFormatter(noclasses=True, style=style or HTML_STYLE)
    return f'<div style="{_HTML_BOX}">{highlight(text, PythonLexer(), formatter)}</div>'


def to_ansi(text: str, style: str | None = None) -> str:
    """``text`` with terminal color escapes, ending in a newline."""
    if style is None:
        formatter = TerminalFormatter()
    elif os.environ.get("COLORTERM", "").lower() in ("truecolor", "24bit"):
        formatter = TerminalTrueColorFormatter(style=style)
    else:
        formatter = Terminal256Formatter(style=style)
    return highlight(text, PythonLexer(), formatter)


def _in_jupyter_kernel() -> bool:
    """True inside a Jupyter kernel (not a terminal IPython), where HTML renders."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    shell = ipython.get_ipython()
    return shell is not None and hasattr(shell, "kernel")


def _wants_color(stream: Any) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())
