"""The import contracts (pyproject ``[tool.importlinter]``) hold, and cannot be fooled.

``make test`` runs ``lint-imports`` on the source; these tests also plant violations in a
copy of the package, written the ways a hand-written check could miss (relative imports,
``from herd import store``, an import inside a function, the clock, uuid and random in a
pure layer), and check that each one breaks the contract.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT = Path(sys.executable).parent / "lint-imports"


def _lint(workdir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT), "--config", str(workdir / "pyproject.toml"), "--no-cache"],
        cwd=workdir,
        env={"PYTHONPATH": str(workdir / "src"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def copy_of_the_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    workdir = tmp_path_factory.mktemp("contracts")
    shutil.copytree(
        ROOT / "src" / "herd", workdir / "src" / "herd", ignore=shutil.ignore_patterns("*.pyc")
    )
    shutil.copy(ROOT / "pyproject.toml", workdir / "pyproject.toml")
    return workdir


def test_the_source_keeps_every_contract(copy_of_the_package: Path) -> None:
    result = _lint(copy_of_the_package)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "source", "broken"),
    [
        (
            "policies/_planted.py",
            "from .. import store\n",
            "herd.policies is not allowed to import herd.store",
        ),
        (
            "policies/_planted.py",
            "from herd import engine\n",
            "herd.policies is not allowed to import herd.engine",
        ),
        (
            "store/_planted.py",
            "def f() -> None:\n    from herd.api import app\n",
            "herd.store is not allowed to import herd.api",
        ),
        ("domain/_planted.py", "import time\n", "herd.domain is not allowed to import time"),
        (
            "policies/_planted.py",
            "from uuid import uuid4\n",
            "herd.policies is not allowed to import uuid",
        ),
        ("planner/_planted.py", "import random\n", "herd.planner is not allowed to import random"),
        (
            "planner/_planted.py",
            "from datetime import datetime\n",
            "herd.planner is not allowed to import datetime",
        ),
        (
            "drivers/_planted.py",
            "from herd.store import models\n",
            "herd.drivers is not allowed to import herd.store",
        ),
        (
            "engine/actions/_planted.py",
            "from sqlalchemy import select\n",
            "herd.engine is not allowed to import sqlalchemy: "
            "- herd.engine.actions._planted -> sqlalchemy",
        ),
        (
            "api/services/_planted.py",
            "def f() -> None:\n    from sqlalchemy.orm import Session\n",
            "herd.api is not allowed to import sqlalchemy: "
            "- herd.api.services._planted -> sqlalchemy",
        ),
    ],
)
def test_a_planted_violation_breaks_a_contract(
    copy_of_the_package: Path, module: str, source: str, broken: str
) -> None:
    planted = copy_of_the_package / "src" / "herd" / module
    planted.write_text(source)
    try:
        result = _lint(copy_of_the_package)
    finally:
        planted.unlink()
    assert result.returncode != 0
    assert broken in " ".join(result.stdout.split()), result.stdout
