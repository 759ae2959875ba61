"""The tutorials in tutorials/ run from top to bottom in a real Jupyter kernel, at small sizes.

Each notebook's cell tagged "parameters" is replaced by small values (the way
papermill would, without depending on it), then nbclient executes it in a fresh
python3 kernel whose working directory is a temporary folder and whose
PYTHONPATH starts with the repository root, so the packages import without an
install. A cell that raises fails the test with the cell's traceback; the
notebooks that print programs must render highlighted HTML and the ones that
plot must produce a PNG.
"""

from __future__ import annotations

import os
import re
from html import unescape
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="nbformat is not installed (pip install -e .[dev])")
nbclient = pytest.importorskip("nbclient", reason="nbclient is not installed (pip install -e .[dev])")
pytest.importorskip("matplotlib", reason="matplotlib is not installed (pip install -e .[dev])")

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = ROOT / "tutorials"
CELL_TIMEOUT_SECONDS = 300
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")  # IPython colours its tracebacks
HTML_TAG = re.compile(r"<[^>]+>")

# Small sizes keep the four notebooks under a minute on a 2-core machine.
PARAMETERS = {
    "01_tensorir_basics.ipynb": {"N": 64},
    "02_gpu_scheduling.ipynb": {"N": 256},
    "03_matmul_blocking.ipynb": {"N": 128},
    "04_auto_tuning.ipynb": {"N": 64, "TRIALS": 8, "DB": "{tmp}/tuning.db"},
}
EXPECTED_MIME = {
    "01_tensorir_basics.ipynb": "text/html",
    "02_gpu_scheduling.ipynb": "text/html",
    "03_matmul_blocking.ipynb": "image/png",
    "04_auto_tuning.ipynb": "image/png",
}


def _kernel_available() -> bool:
    try:
        from jupyter_client.kernelspec import find_kernel_specs
    except ImportError:
        return False
    return "python3" in find_kernel_specs()


def _parameters_cell(notebook):
    tagged = [cell for cell in notebook.cells if "parameters" in cell.metadata.get("tags", [])]
    assert len(tagged) == 1, f"expected one cell tagged 'parameters', found {len(tagged)}"
    return tagged[0]


def _override_parameters(notebook, values: dict[str, object], tmp_path: Path) -> None:
    cell = _parameters_cell(notebook)
    defined = {line.split("=")[0].strip() for line in cell.source.splitlines() if "=" in line}
    assert defined == set(values), f"the parameters cell sets {sorted(defined)}, the test {sorted(values)}"
    lines = []
    for name, value in values.items():
        if isinstance(value, str):
            value = value.format(tmp=tmp_path)
        lines.append(f"{name} = {value!r}")
    cell.source = "\n".join(lines)


def _outputs(notebook, mime: str) -> list[str]:
    return [
        output["data"][mime]
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        if output.get("output_type") in ("display_data", "execute_result") and mime in output.get("data", {})
    ]


def test_every_tutorial_is_tested():
    assert sorted(p.name for p in TUTORIALS.glob("*.ipynb")) == sorted(PARAMETERS)


def test_tutorials_are_committed_without_outputs():
    for name in PARAMETERS:
        notebook = nbformat.read(TUTORIALS / name, as_version=4)
        for cell in notebook.cells:
            if cell.cell_type == "code":
                assert not cell.outputs and cell.execution_count is None, f"{name} has outputs; clear them"


@pytest.mark.slow
@pytest.mark.skipif(not _kernel_available(), reason="no python3 Jupyter kernel (pip install ipykernel)")
@pytest.mark.parametrize("name", sorted(PARAMETERS))
def test_tutorial_runs(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    notebook = nbformat.read(TUTORIALS / name, as_version=4)
    _override_parameters(notebook, PARAMETERS[name], tmp_path)
    # The kernel (and the tuner's worker processes) inherit this environment.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    client = nbclient.NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT_SECONDS,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as err:
        pytest.fail(f"{name} failed:\n{ANSI_ESCAPE.sub('', str(err))}", pytrace=False)

    mime = EXPECTED_MIME[name]
    outputs = _outputs(notebook, mime)
    assert outputs, f"{name} produced no {mime} output"
    if mime == "text/html":
        highlighted = [html for html in outputs if "<span style=" in html]
        assert any("@T.prim_func" in unescape(HTML_TAG.sub("", html)) for html in highlighted), (
            f"{name}: no highlighted TVMScript among its HTML outputs"
        )
