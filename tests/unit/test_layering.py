"""The layering rule of DESIGN.md, checked on the source: a module imports only from its left.

``types, errors, config -> domain -> policies, planner -> drivers -> store ->
engine -> api, cli, agent``; and the pure layers import no I/O, clock or randomness.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "herd"

LAYERS = {
    "types": 0,
    "errors": 0,
    "config": 0,
    "observability": 0,  # metrics and log context: a leaf every layer may record into
    "domain": 1,
    "policies": 2,
    "planner": 2,
    "drivers": 3,
    "store": 4,
    "engine": 5,
    "regions": 5,
    "api": 6,
    "agent": 6,
    "cli": 7,  # the entry point: starts the server, the engine and agents
}
PURE = {"domain", "policies", "planner"}
FORBIDDEN_IN_PURE = {
    "sqlalchemy",
    "httpx",
    "fastapi",
    "starlette",
    "uvicorn",
    "time",
    "random",
    "socket",
    "subprocess",
    "threading",
    "asyncio",
    "os",
    "requests",
    "urllib.request",
}


def _package(path: Path) -> str:
    relative = path.relative_to(SRC)
    return relative.parts[0].removesuffix(".py")


def _imports(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(), str(path))
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, node.lineno))
    return found


MODULES = sorted(p for p in SRC.rglob("*.py") if _package(p) in LAYERS)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(SRC)))
def test_module_imports_only_from_its_left(path: Path) -> None:
    own = _package(path)
    problems = []
    for module, line in _imports(path):
        if module.startswith("herd."):
            target = module.split(".")[1]
            if target in LAYERS and target != own and LAYERS[target] >= LAYERS[own]:
                problems.append(f"line {line}: {own} (layer {LAYERS[own]}) imports {module}")
        elif own in PURE:
            root = module.split(".")[0]
            if module in FORBIDDEN_IN_PURE or root in FORBIDDEN_IN_PURE:
                problems.append(f"line {line}: pure layer {own} imports {module}")
    assert not problems, "\n".join(problems)


def test_every_package_has_a_layer() -> None:
    packages = {p.name for p in SRC.iterdir() if p.is_dir() and not p.name.startswith("__")}
    modules = {p.stem for p in SRC.glob("*.py") if p.stem != "__init__"}
    assert packages | modules <= set(LAYERS)
