"""The ``herd`` command against a real ``herd serve``: the README's first-cluster walk."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml
from tests.e2e.sdk import node_processes, process_profile_spec
from tests.e2e.server import HERD, HerdServer

pytestmark = pytest.mark.e2e


def herd(server: HerdServer, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}  # wide enough that table cells do not wrap
    result = subprocess.run(
        [HERD, "--url", server.url, *args], capture_output=True, text=True, timeout=120, env=env
    )
    if check:
        assert result.returncode == 0, f"herd {' '.join(args)}: {result.stdout}{result.stderr}"
    return result


def test_first_cluster_walk_with_the_cli(herd_server: HerdServer, tmp_path: Path) -> None:
    spec = tmp_path / "web.yaml"
    spec.write_text(yaml.safe_dump(process_profile_spec()))
    herd(herd_server, "profile", "create", "web", "--spec-file", str(spec))
    herd(
        herd_server,
        "cluster",
        "create",
        "web",
        "--profile",
        "web",
        "--desired-capacity",
        "3",
        "--wait",
    )
    herd(herd_server, "cluster", "scale-out", "web", "--count", "2", "--wait")
    members = json.loads(herd(herd_server, "--json", "cluster", "members", "web").stdout)
    nodes = members["nodes"] if isinstance(members, dict) else members
    assert len(nodes) == 5
    target = sorted(nodes, key=lambda n: n["index"])[1]
    out = herd(
        herd_server,
        "--json",
        "node",
        "mark-unhealthy",
        "web",
        target["name"],
        "--reason",
        "app says broken",
    )
    marked = json.loads(out.stdout)
    assert marked["node"]["health"] == "CHECK_FAILED"
    assert marked["node"]["health_reason"] == "app says broken"
    table = herd(herd_server, "cluster", "members", "web").stdout
    assert "CHECK_FAILED" in table
    herd(herd_server, "cluster", "scale-in", "web", "--count", "1", "--wait")
    remaining = json.loads(herd(herd_server, "--json", "cluster", "members", "web").stdout)
    remaining = remaining["nodes"] if isinstance(remaining, dict) else remaining
    assert target["id"] not in {n["id"] for n in remaining}
    assert set(node_processes(herd_server.data_dir)) == {n["id"] for n in remaining}

    failed = herd(herd_server, "cluster", "scale-in", "nope", check=False)
    assert failed.returncode == 1
    assert "could not be found" in failed.stdout + failed.stderr
    assert "Traceback" not in failed.stdout + failed.stderr

    herd(herd_server, "cluster", "delete", "web", "--wait")
    assert node_processes(herd_server.data_dir) == {}
