"""openstacksdk helpers for end-to-end tests, and a view of the node processes on this host."""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path
from typing import Any

import openstack


def connect(url: str) -> Any:
    conn = openstack.connect(
        auth_type="none", auth={"endpoint": url}, clustering_endpoint_override=url
    )
    return conn.clustering


def process_profile_spec() -> dict[str, Any]:
    """A herd.process profile whose nodes are small HTTP servers on their own ports."""
    return {
        "type": "herd.process",
        "version": "1.0",
        "properties": {
            "command": sys.executable,
            "args": ["-m", "herd.drivers.testserver", "--port", "{port}"],
            "health_url": "http://127.0.0.1:{port}/health",
            "stop_timeout": 5,
        },
    }


def wait_action(clustering: Any, answer: Any, timeout: float = 60.0) -> Any:
    """Wait for the action an API call answered with; return it once it has ended."""
    action_id = answer["action"] if isinstance(answer, dict) else answer
    assert isinstance(action_id, str), f"no action in answer: {answer!r}"
    end = time.time() + timeout
    while time.time() < end:
        action = clustering.get_action(action_id)
        if action.status in ("SUCCEEDED", "FAILED", "CANCELLED"):
            return action
        time.sleep(0.1)
    raise AssertionError(f"action {action_id} still running after {timeout}s")


def node_processes(data_dir: Path) -> dict[str, int]:
    """Live processes started by herd for this data dir: node id -> pid (group leaders only)."""
    marker = str(data_dir.resolve())
    found: dict[str, int] = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            stat = (proc / "stat").read_text()
            if stat.rsplit(")", 1)[1].split()[0] == "Z":
                continue
            env = dict(
                item.split("=", 1)
                for item in (proc / "environ").read_bytes().decode(errors="replace").split("\0")
                if "=" in item
            )
            if marker in env.get("HERD_OWNER", "") and "HERD_NODE_ID" in env:
                pid = int(proc.name)
                pgid = int(stat.rsplit(")", 1)[1].split()[2])
                if pgid == pid:
                    found[env["HERD_NODE_ID"]] = pid
    return found
