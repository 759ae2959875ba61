"""Ray is optional: the tuner imports and runs without it, and `--ray` says which extra installs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tuner.cli import main

REPO = Path(__file__).resolve().parents[2]


def test_the_tuner_never_imports_ray_unless_asked():
    code = "import sys; import tuner, tuner.cli, tuner.tasks, tuner.search; print('ray' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_ray_flag_without_ray_is_one_line_naming_the_extra(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now fails as if it were not installed
    args = ["tune", "matmul", "--shape", "16,16,16", "--trials", "1", "--db", str(tmp_path / "t.db"), "--ray"]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "pip install 'tensorir-py[ray]'" in err
