"""What a driver is told about a node is built in one place (``herd/engine/driver_args.py``).

The source is read (ast): a ``ResourceRef(...)`` or ``NodeRequest(...)`` built anywhere else in
the package fails here, so a new engine path cannot describe a node its own way.
"""

from __future__ import annotations

import ast
from pathlib import Path

from herd.drivers.base import NodeRequest, ResourceRef
from herd.engine.driver_args import node_request, ref_of, resource_ref
from herd.store.nodes import NodeFacts

SOURCE = Path(__file__).resolve().parents[3] / "src" / "herd"
BUILDERS = frozenset(("ResourceRef", "NodeRequest"))


def _built_at(root: Path) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
                if name in BUILDERS:
                    found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def test_only_driver_args_builds_a_drivers_arguments() -> None:
    assert {place.split(":")[0] for place in _built_at(SOURCE)} == {"engine/driver_args.py"}


def test_a_planted_builder_is_caught(tmp_path: Path) -> None:
    (tmp_path / "planted.py").write_text(
        "from herd.drivers import base\nref = base.ResourceRef('n', None, {}, {})\n"
    )
    assert _built_at(tmp_path) == ["planted.py:2"]


def test_the_arguments_copy_what_the_driver_may_keep() -> None:
    facts = NodeFacts(
        id="n1", name="web-1", index=3, cluster_id="c1", physical_id="p1", profile_id="pr",
        data={"placement": {"zone": "az1"}, "port": 80}, meta_data={"k": "v"},
    )  # fmt: skip
    ref = resource_ref(facts, {"flavor": "m1"})
    assert ref == ResourceRef(
        "n1", "p1", {"placement": {"zone": "az1"}, "port": 80}, {"flavor": "m1"}
    )
    assert ref.data is not facts.data
    request = node_request(facts, {"flavor": "m1"})
    assert request == NodeRequest(
        node_id="n1", name="web-1", index=3, cluster_id="c1", properties={"flavor": "m1"},
        placement={"zone": "az1"}, metadata={"k": "v"},
    )  # fmt: skip
    assert ref_of("n2", None, None, {}) == ResourceRef("n2", None, {}, {})
