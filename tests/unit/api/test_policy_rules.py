"""The policy rule of each route under ``auth: keystone``: Senlin's names, herd's defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from herd.api.policy import PolicyEnforcer, default_check, rule_name
from herd.errors import Forbidden, InvalidRequest


@pytest.mark.parametrize(
    ("method", "path", "name"),
    [
        ("GET", "/v1/clusters", "clusters:index"),
        ("POST", "/v1/clusters", "clusters:create"),
        ("GET", "/v1/clusters/{cluster_id}", "clusters:get"),
        ("PATCH", "/v1/clusters/{cluster_id}", "clusters:update"),
        ("DELETE", "/v1/clusters/{cluster_id}", "clusters:delete"),
        ("POST", "/v1/clusters/{cluster_id}/actions", "clusters:action"),
        ("POST", "/v1/clusters/{cluster_id}/ops", "clusters:operation"),
        ("GET", "/v1/clusters/{cluster_id}/attrs/{path:path}", "clusters:collect"),
        ("GET", "/v1/clusters/{cluster_id}/policies", "cluster_policies:index"),
        ("GET", "/v1/clusters/{cluster_id}/policies/{policy_id}", "cluster_policies:get"),
        ("POST", "/v1/profiles/validate", "profiles:validate"),
        ("GET", "/v1/profile-types/{type_name}/ops", "profile_types:ops"),
        ("GET", "/v1/policy-types", "policy_types:index"),
        ("POST", "/v1/nodes/adopt-preview", "nodes:adopt_preview"),
        ("POST", "/v1/receivers/{receiver_id}/notify", "receivers:notify"),
        ("PATCH", "/v1/actions/{action_id}", "actions:update"),
        ("GET", "/v1/build-info", "build_info:build_info"),
        ("GET", "/v1/services", "services:index"),
        # herd's own routes: resource, fixed segments, method
        ("PUT", "/v1/clusters/{cluster_id}/metadata/{key}", "clusters:metadata:put"),
        ("PATCH", "/v1/clusters/{cluster_id}/nodes/{node_id}", "clusters:nodes:patch"),
    ],
)
def test_senlin_rule_names(method: str, path: str, name: str) -> None:
    assert rule_name(method, path) == name


def test_defaults_reader_member_admin() -> None:
    assert default_check("clusters:index", "GET") == "rule:project_reader"
    assert default_check("clusters:create", "POST") == "rule:project_member"
    assert default_check("services:index", "GET") == "rule:context_is_admin"


ROUTES = [("GET", "/v1/profiles"), ("POST", "/v1/profiles"), ("GET", "/v1/services")]


def creds(*roles: str) -> dict[str, object]:
    return {"roles": list(roles), "project_id": "p", "user_id": "u"}


def test_enforcer_defaults() -> None:
    enforcer = PolicyEnforcer(ROUTES, None)
    assert enforcer.allowed("profiles:index", creds("reader"))
    assert not enforcer.allowed("profiles:create", creds("reader"))
    assert enforcer.allowed("profiles:create", creds("member", "reader"))
    assert not enforcer.allowed("services:index", creds("member"))
    assert enforcer.allowed("services:index", creds("admin"))
    assert not enforcer.allowed("profiles:index", creds())  # a token without a role
    with pytest.raises(Forbidden, match="You are not authorized to complete this operation"):
        enforcer.authorize("profiles:create", creds("reader"))


def test_operator_policy_file_overrides_one_rule(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text('"profiles:create": "rule:context_is_admin"\n')
    enforcer = PolicyEnforcer(ROUTES, policy)
    assert not enforcer.allowed("profiles:create", creds("member"))
    assert enforcer.allowed("profiles:create", creds("admin"))
    assert enforcer.allowed("profiles:index", creds("reader"))
    assert enforcer.rules()["profiles:create"] == "rule:context_is_admin"


def test_missing_policy_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidRequest, match="does not exist"):
        PolicyEnforcer(ROUTES, tmp_path / "absent.yaml")
