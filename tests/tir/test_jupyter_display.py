"""A PrimFunc in a real Jupyter kernel renders as highlighted HTML, both as a cell's value and via show()."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="nbformat is not installed (pip install -e .[dev])")
nbclient = pytest.importorskip("nbclient", reason="nbclient is not installed (pip install -e .[dev])")

ROOT = Path(__file__).resolve().parents[2]

BUILD_FUNCTION = """
import sys
sys.path.insert(0, {root!r})
from tir import Block, BlockRealize, Buffer, BufferRegion, BufferStore, For, ForKind, IntImm
from tir import IterKind, IterVar, PrimFunc, Range, Var

A, B = Buffer("A", (8,)), Buffer("B", (8,))
i, vi = Var("i"), Var("vi")
block = Block(
    "B",
    (IterVar(vi, Range(IntImm(0), IntImm(8)), IterKind.SPATIAL),),
    (BufferRegion(A, (Range(vi, IntImm(1)),)),),
    (BufferRegion(B, (Range(vi, IntImm(1)),)),),
    BufferStore(B, A[vi] * A[vi], (vi,)),
)
loop = For(i, IntImm(0), IntImm(8), ForKind.SERIAL, BlockRealize((i,), IntImm(1, "bool"), block))
root = BlockRealize((), IntImm(1, "bool"), Block("root", (), (), (), loop))
func = PrimFunc((A, B), root, {{"global_symbol": "main"}})
"""


def _kernel_available() -> bool:
    try:
        from jupyter_client.kernelspec import find_kernel_specs
    except ImportError:
        return False
    return "python3" in find_kernel_specs()


def _html_outputs(cell) -> list[str]:
    return [
        output["data"]["text/html"]
        for output in cell.outputs
        if output.get("output_type") in ("display_data", "execute_result")
        and "text/html" in output.get("data", {})
    ]


@pytest.mark.skipif(not _kernel_available(), reason="no python3 Jupyter kernel (pip install ipykernel)")
def test_primfunc_renders_highlighted_html_in_a_notebook():
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(BUILD_FUNCTION.format(root=str(ROOT))),
        nbformat.v4.new_code_cell("func"),
        nbformat.v4.new_code_cell("func.show()"),
    ]
    client = nbclient.NotebookClient(
        notebook, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}
    )
    client.execute()

    value_html = _html_outputs(notebook.cells[1])
    shown_html = _html_outputs(notebook.cells[2])
    assert len(value_html) == 1 and len(shown_html) == 1
    for html in (value_html[0], shown_html[0]):
        assert "<span style=" in html and "monospace" in html
        text = unescape(re.sub(r"<[^>]+>", "", html))
        assert "vi = T.axis.spatial(8, i)" in text and "B[vi] = A[vi] * A[vi]" in text
    assert not any(o.get("name") == "stdout" for o in notebook.cells[2].outputs), (
        "show() printed plain text too"
    )
