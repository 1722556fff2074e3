"""Node rows are written through one path, which bumps the member revision itself.

The member revision (``herd.store.member_revisions``) tells a process whether the members it
holds in memory are still right; it is right only if every transaction that writes node rows
says which. ORM flushes are seen by a session hook; a Core statement is not. So the contract:

* an INSERT, UPDATE or DELETE of ``nodes`` (``insert/update/delete(NodeRow)``, of
  ``NodeRow.__table__``, through an alias, the bulk helpers, a dialect's ``insert``, the ORM's
  ``bulk_*_mappings``, or SQL text) is written only in ``herd/store/nodes.py`` or
  ``herd/store/mark_statement.py`` (PostgreSQL's one-statement mark batch);
* every function there that runs one calls ``member_revisions.touch`` or ``touch_nodes``, or
  runs a statement that bumps ``member_revisions`` itself (SQL text naming the table).

The check reads the source (ast), so it holds for code no test runs; the planted cases below
show that each way of writing a bypass is caught.
"""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[3] / "src" / "herd"
#: the modules allowed to write node rows with statements
NODE_WRITERS = (Path("store") / "nodes.py", Path("store") / "mark_statement.py")
_WRITE_CALLS = frozenset(
    (
        "insert",
        "update",
        "delete",
        "insert_rows",
        "update_rows",
        "bulk_insert_mappings",
        "bulk_update_mappings",
        "bulk_save_objects",
    )
)
_TOUCHES = frozenset(("touch", "touch_nodes"))
_SQL_WRITE = re.compile(r"\b(insert\s+into|update|delete\s+from)\s+\"?nodes\b", re.IGNORECASE)
#: SQL text that bumps the member revision in the statement that writes the nodes
_SQL_BUMP = re.compile(r"\binsert\s+into\s+member_revisions\b", re.IGNORECASE)


def _call_name(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _node_names(tree: ast.Module) -> set[str]:
    """Names that stand for the node model or table in this module (imports, aliases)."""
    names = {"NodeRow"}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names.update(a.asname for a in node.names if a.name == "NodeRow" and a.asname)
    changed = True
    while changed:  # X = NodeRow; Y = X.__table__
        changed = False
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and _is_alias(node.value, names):
                for target in node.targets:
                    if isinstance(target, ast.Name) and target.id not in names:
                        names.add(target.id)
                        changed = True
    return names


def _is_alias(expr: ast.AST, names: set[str]) -> bool:
    """``NodeRow``, ``models.NodeRow``, ``X.__table__`` or ``aliased(X)`` of such a name."""
    if isinstance(expr, ast.Name):
        return expr.id in names
    if isinstance(expr, ast.Attribute):
        return expr.attr == "NodeRow" or (expr.attr == "__table__" and _is_alias(expr.value, names))
    if isinstance(expr, ast.Call) and expr.args:
        return _call_name(expr) in ("aliased", "inspect") and _is_alias(expr.args[0], names)
    return False


def _mentions(expr: ast.AST, names: set[str]) -> bool:
    for node in ast.walk(expr):
        if isinstance(node, ast.Name) and node.id in names:
            return True
        if isinstance(node, ast.Attribute) and node.attr == "NodeRow":
            return True
    return False


def _is_node_write(node: ast.AST, names: set[str]) -> bool:
    if isinstance(node, ast.Call) and _call_name(node) in _WRITE_CALLS:
        return any(_mentions(arg, names) for arg in node.args[:2])
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return bool(_SQL_WRITE.search(node.value))
    return False


def bypasses(root: Path) -> list[str]:
    """Every place under ``root`` (a copy of ``src/herd``) that breaks the contract."""
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        tree = ast.parse(path.read_text(), filename=str(path))
        names = _node_names(tree)
        writes = [node for node in ast.walk(tree) if _is_node_write(node, names)]
        if relative not in NODE_WRITERS:
            found += [f"{relative}:{node.lineno}: writes node rows" for node in writes]  # type: ignore[attr-defined]
            continue
        # Module-level statements (compiled once) are run by the functions that name them.
        bumping = {
            target.id
            for node in tree.body
            if isinstance(node, ast.Assign)
            and any(
                isinstance(n, ast.Constant)
                and isinstance(n.value, str)
                and _SQL_BUMP.search(n.value)
                for n in ast.walk(node)
            )
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        statements = {
            target.id
            for node in tree.body
            if isinstance(node, ast.Assign)
            and any(_is_node_write(n, names) for n in ast.walk(node))
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef):
                continue
            inside = list(ast.walk(function))
            runs = any(_is_node_write(n, names) for n in inside) or any(
                isinstance(n, ast.Name) and n.id in statements for n in inside
            )
            touches = any(
                isinstance(n, ast.Call) and _call_name(n) in _TOUCHES for n in inside
            ) or any(isinstance(n, ast.Name) and n.id in bumping for n in inside)
            if runs and not touches:
                found.append(f"{relative}:{function.lineno}: {function.name} writes without touch")
    return found


def test_the_source_writes_node_rows_only_through_the_one_path() -> None:
    assert bypasses(SOURCE) == []


@pytest.fixture
def package_copy(tmp_path: Path) -> Path:
    shutil.copytree(SOURCE, tmp_path / "herd", ignore=shutil.ignore_patterns("*.pyc"))
    return tmp_path / "herd"


PLANTED = "from sqlalchemy import update\nfrom herd.store.models import NodeRow\n"


@pytest.mark.parametrize(
    "source",
    [
        PLANTED + "def f(s):\n    s.execute(update(NodeRow).values(status='ACTIVE'))\n",
        "import sqlalchemy as sa\nfrom herd.store import models\n"
        "def f(s):\n    s.execute(sa.delete(models.NodeRow))\n",
        "from sqlalchemy.dialects import sqlite\nfrom herd.store.models import NodeRow as N\n"
        "TABLE = N.__table__\n"
        "def f(c):\n    c.execute(sqlite.insert(TABLE).values(id='x'))\n",
        "from herd.store.bulk import update_rows\nfrom herd.store.models import NodeRow\n"
        "def f(s, rows):\n    update_rows(s, NodeRow, rows)\n",
        "from sqlalchemy import text\n"
        "def f(s):\n    s.execute(text('UPDATE nodes SET status = :s'))\n",
        "from herd.store.models import NodeRow\n"
        "def f(s, rows):\n    s.bulk_update_mappings(NodeRow, rows)\n",
    ],
    ids=["update", "module-attribute", "alias-table-dialect", "bulk-helper", "text", "orm-bulk"],
)
def test_a_planted_bypass_is_caught(package_copy: Path, source: str) -> None:
    (package_copy / "engine" / "_planted.py").write_text(source)
    assert any(place.startswith("engine/_planted.py:") for place in bypasses(package_copy))


def test_a_write_in_the_node_module_that_does_not_touch_is_caught(package_copy: Path) -> None:
    module = package_copy / NODE_WRITERS[0]
    module.write_text(
        module.read_text()
        + "\n\ndef planted_write(session, ids):\n"
        + "    session.execute(update(NodeRow).where(NodeRow.id.in_(ids)).values(role='x'))\n"
    )
    assert any("planted_write writes without touch" in place for place in bypasses(package_copy))


def test_a_statement_that_writes_nodes_without_bumping_the_revision_is_caught(
    package_copy: Path,
) -> None:
    module = package_copy / NODE_WRITERS[1]
    module.write_text(
        module.read_text()
        + "\n\n_PLANTED = text('UPDATE nodes SET role = :r WHERE id = ANY(:ids)')\n"
        + "\n\ndef planted_write(connection, ids):\n"
        + "    connection.execute(_PLANTED, {'r': 'x', 'ids': ids})\n"
    )
    assert any("planted_write writes without touch" in place for place in bypasses(package_copy))
