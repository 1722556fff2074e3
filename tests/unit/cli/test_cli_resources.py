from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.unit.cli.fakeapi import Answer, FakeApi

SPEC = {
    "type": "herd.process",
    "version": "1.0",
    "properties": {"command": "python3", "args": ["-m", "http.server"]},
}


def test_profile_create_from_yaml(api: FakeApi, herd: Any, tmp_path: Path) -> None:
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(
        "type: herd.process\nversion: '1.0'\nproperties:\n"
        "  command: python3\n  args: [-m, http.server]\n"
    )
    profile = {"id": "p1", "name": "pserver", "type": "herd.process-1.0", "spec": SPEC}
    api.on("POST", "/v1/profiles", Answer(201, {"profile": profile}))
    run = herd("profile", "create", "pserver", "--spec-file", str(spec_file), "-m", "k=v")
    assert run.exit_code == 0, run.stderr
    assert api.sent()[0].body == {
        "profile": {"name": "pserver", "spec": SPEC, "metadata": {"k": "v"}}
    }
    assert "herd.process-1.0" in run.stdout


def test_profile_validate_from_json(api: FakeApi, herd: Any, tmp_path: Path) -> None:
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(SPEC))
    api.on("POST", "/v1/profiles/validate", Answer(200, {"profile": {"spec": SPEC}}))
    assert herd("profile", "validate", "--spec-file", str(spec_file)).exit_code == 0
    assert api.sent()[0].body == {"profile": {"spec": SPEC}}


def test_bad_spec_file(api: FakeApi, herd: Any, tmp_path: Path) -> None:
    spec_file = tmp_path / "spec.json"
    spec_file.write_text("{not json")
    run = herd("profile", "create", "x", "--spec-file", str(spec_file))
    assert run.exit_code == 1 and "is not valid" in run.stderr
    run = herd("profile", "create", "x", "--spec-file", str(tmp_path / "missing.yaml"))
    assert run.exit_code == 1 and "cannot read spec file" in run.stderr
    assert api.sent() == []


def test_profile_list_update_delete(api: FakeApi, herd: Any) -> None:
    api.on("GET", "/v1/profiles", Answer(200, {"profiles": [{"id": "p1", "name": "pserver"}]}))
    api.on("PATCH", "/v1/profiles/p1", Answer(200, {"profile": {"id": "p1", "name": "p2"}}))
    api.on("DELETE", "/v1/profiles/p1", Answer(204))
    assert "pserver" in herd("profile", "list", "--type", "herd.process-1.0").stdout
    assert herd("profile", "update", "p1", "--name", "p2").exit_code == 0
    assert "deleted" in herd("profile", "delete", "p1").stdout
    assert api.sent("GET")[0].query == {"type": ["herd.process-1.0"]}
    assert api.sent("PATCH")[0].body == {"profile": {"name": "p2"}}


def test_policy_create_and_types(api: FakeApi, herd: Any, tmp_path: Path) -> None:
    spec = {
        "type": "senlin.policy.deletion",
        "version": 1.1,
        "properties": {"criteria": "OLDEST_FIRST"},
    }
    spec_file = tmp_path / "dp.yaml"
    spec_file.write_text(json.dumps(spec))
    policy = {"id": "x1", "name": "dp01", "type": "senlin.policy.deletion-1.1"}
    api.on("POST", "/v1/policies", Answer(201, {"policy": policy}))
    api.on(
        "GET",
        "/v1/policy-types",
        Answer(200, {"policy_types": [{"name": "senlin.policy.deletion", "version": "1.1"}]}),
    )
    api.on(
        "GET",
        "/v1/profile-types/herd.process-1.0",
        Answer(200, {"profile_type": {"name": "herd.process-1.0", "schema": {}}}),
    )
    assert herd("policy", "create", "dp01", "--spec-file", str(spec_file)).exit_code == 0
    assert api.sent("POST")[0].body == {"policy": {"name": "dp01", "spec": spec}}
    assert "senlin.policy.deletion" in herd("policy-type", "list").stdout
    assert "herd.process-1.0" in herd("profile-type", "show", "herd.process-1.0").stdout


def test_action_list_show_cancel(api: FakeApi, herd: Any) -> None:
    action = {
        "id": "a1",
        "name": "cluster_scale_in_c1",
        "action": "CLUSTER_SCALE_IN",
        "status": "RUNNING",
    }
    api.on("GET", "/v1/actions", Answer(200, {"actions": [action]}))
    api.on("GET", "/v1/actions/a1", Answer(200, {"action": action}))
    api.on("PATCH", "/v1/actions/a1", Answer(202, None, {"Location": "/v1/actions/a1"}))
    run = herd("action", "list", "--cluster", "web", "--status", "RUNNING")
    assert "CLUSTER_SCALE_IN" in run.stdout
    assert api.sent("GET")[0].query == {"cluster_id": ["web"], "status": ["RUNNING"]}
    assert "cluster_scale_in_c1" in herd("action", "show", "a1").stdout
    assert herd("action", "cancel", "a1", "--force").exit_code == 0
    cancel = api.sent("PATCH")[0]
    assert cancel.body == {"action": {"status": "CANCELLED"}}
    assert cancel.query == {"force": ["true"]}


def test_event_list_filters(api: FakeApi, herd: Any) -> None:
    event = {"id": "e1", "generated_at": "2024-01-01T00:00:00Z", "level": "ERROR", "oname": "web-1"}
    api.on("GET", "/v1/events", Answer(200, {"events": [event]}))
    api.on("GET", "/v1/events/e1", Answer(200, {"event": event}))
    run = herd("event", "list", "--cluster", "web", "--oid", "n1", "--level", "ERROR")
    assert run.exit_code == 0 and "web-1" in run.stdout
    assert api.sent()[0].query == {"cluster_id": ["web"], "oid": ["n1"], "level": ["ERROR"]}
    assert "ERROR" in herd("event", "show", "e1").stdout


def test_deletions_list_and_purge(api: FakeApi, herd: Any) -> None:
    row = {
        "resource_type": "cluster",
        "resource_id": "c1",
        "deleted_at": "2024-01-01T00:00:00Z",
        "age": 3725,
        "status": "ERROR",
        "reason": "region r2 unreachable",
        "action_id": "a1",
        "requested_by": "admin",
    }
    api.on("GET", "/v1/deletions", Answer(200, {"deletions": [row]}))
    purging = {"deletion": {**row, "status": "PURGING", "action": "p1"}}
    api.on(
        "DELETE",
        "/v1/deletions/cluster/c1",
        Answer(202, purging, {"Location": "/v1/actions/p1"}),
    )
    done = {"action": {"id": "p1", "status": "SUCCEEDED", "status_reason": "purged"}}
    api.on("GET", "/v1/actions/p1", Answer(200, done))
    run = herd("deletions", "list")
    assert run.exit_code == 0
    assert "1h02m05s" in run.stdout and "region r2 unreachable" in run.stdout
    run = herd("deletions", "purge", "cluster", "c1", "--force", "--wait")
    assert run.exit_code == 0, run.stderr
    assert api.sent("DELETE")[0].query == {"force": ["true"]}
    assert "PURGING" in run.stdout and "Action p1 SUCCEEDED: purged" in run.stdout
    assert herd("deletions", "purge", "cluster", "c1").exit_code == 0
    assert api.sent("DELETE")[1].query == {}
