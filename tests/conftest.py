"""Shared pytest setup for the whole suite: makes the repository root importable.

The packages (tir, schedule, codegen, tuner) and the fixture corpus
(tests/fixtures) are imported from the checkout, so the suite runs without
installing the project first.
"""

from __future__ import annotations

import sys
from pathlib import Path

_REPO_ROOT = str(Path(__file__).resolve().parent.parent)
if _REPO_ROOT not in sys.path:
    sys.path.insert(0, _REPO_ROOT)


def pytest_addoption(parser):
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite the golden source files (tests/codegen/golden/) from the current code generators",
    )
