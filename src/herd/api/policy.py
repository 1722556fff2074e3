"""Who may call what under ``auth: keystone``: oslo.policy rules, named as Senlin named them.

Every route has a rule, ``<resource>:<operation>`` (``clusters:create``,
``profiles:validate``, ``cluster_policies:index``), derived from its method and path by
:func:`rule_name`: the names of Senlin's ``senlin/common/policies`` for the routes Senlin
had, the same scheme for herd's own (``clusters:metadata:put``). An operator's policy
file (``settings.policy_file``, oslo.policy's YAML or JSON) overrides any of them.

The defaults differ from Senlin's on purpose: Senlin left every rule but
``services:index`` open to any token; herd uses the roles Keystone has had since its
secure RBAC work (``reader`` < ``member`` < ``admin``, implied by ``keystone-manage
bootstrap``): reads need ``project_reader``, changes ``project_member``, the services
list ``context_is_admin``. Which project's resources a caller reaches is not a rule here:
the store scopes every read and write to the token's project (``RequestContext.scope``),
and ``context_is_admin`` decides who is an admin (all projects, ``global_project``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from herd.errors import Forbidden

FORBIDDEN = "You are not authorized to complete this operation."

#: the rules other rules refer to (``rule:project_member``)
BASE_RULES: dict[str, tuple[str, str]] = {
    "context_is_admin": ("role:admin", "An administrator: every project, global_project."),
    "project_reader": (
        "role:reader or role:member or role:admin",
        "May read the resources of the token's project.",
    ),
    "project_member": (
        "role:member or role:admin",
        "May create, change and delete the resources of the token's project.",
    ),
    "deny_everybody": ("!", "Nobody."),
}

#: routes whose default is not the one their method gives
DEFAULT_OVERRIDES: dict[str, str] = {
    "services:index": "rule:context_is_admin",
}

#: the last fixed segment of a path, as the operation Senlin called it
_OPERATIONS = {
    "actions": "action",
    "ops": "operation",
    "attrs": "collect",
    "validate": "validate",
    "adopt": "adopt",
    "adopt-preview": "adopt_preview",
    "notify": "notify",
    "trigger": "trigger",
}
_READS = frozenset({"GET", "HEAD"})


def rule_name(method: str, path: str) -> str:
    """The rule of a route, from its method and path template.

    ``GET /v1/clusters`` is ``clusters:index``, ``GET /v1/clusters/{cluster_id}``
    ``clusters:get``, ``POST /v1/clusters/{cluster_id}/actions`` ``clusters:action``,
    ``GET /v1/clusters/{cluster_id}/policies`` ``cluster_policies:index``.
    """
    method = method.upper()
    segments = [s for s in path.strip("/").split("/") if s]
    if segments and segments[0] == "v1":
        segments = segments[1:]
    if not segments:
        return "versions:get"
    resource = segments[0].replace("-", "_")
    rest = segments[1:]
    fixed = [s for s in rest if not s.startswith("{")]
    has_id = any(s.startswith("{") for s in rest)
    if resource == "build_info":
        return "build_info:build_info"
    if resource == "profile_types" and fixed == ["ops"]:
        return "profile_types:ops"
    if resource == "clusters" and fixed[:1] == ["policies"]:
        return "cluster_policies:get" if len(rest) > 2 else "cluster_policies:index"
    if not fixed:
        if method in _READS:
            return f"{resource}:get" if has_id else f"{resource}:index"
        verbs = {"POST": "create", "PATCH": "update", "PUT": "update", "DELETE": "delete"}
        return f"{resource}:{verbs.get(method, method.lower())}"
    if len(fixed) == 1 and fixed[0] in _OPERATIONS:
        return f"{resource}:{_OPERATIONS[fixed[0]]}"
    return f"{resource}:{'_'.join(fixed).replace('-', '_')}:{method.lower()}"


def default_check(name: str, method: str) -> str:
    if name in DEFAULT_OVERRIDES:
        return DEFAULT_OVERRIDES[name]
    return "rule:project_reader" if method.upper() in _READS else "rule:project_member"


class PolicyEnforcer:
    """oslo.policy's ``Enforcer`` with herd's defaults, and the operator's file if any."""

    def __init__(self, routes: Iterable[tuple[str, str]], policy_file: Path | None) -> None:
        from oslo_config import cfg
        from oslo_policy import policy

        conf = cfg.ConfigOpts()
        conf([], project="herd", default_config_files=[], default_config_dirs=[])
        from oslo_policy import opts

        if policy_file is not None and not policy_file.is_file():
            from herd.errors import InvalidRequest

            raise InvalidRequest(
                f"The policy file {policy_file} does not exist.", field="policy_file"
            )
        # oslo.policy puts the registered defaults in force only when it reads a file
        # (use_conf). Without the operator's file it reads an empty one (os.devnull)
        # rather than searching ~/ and /etc for a policy.yaml nobody meant for herd.
        opts.set_defaults(conf, policy_dirs=[])
        self._enforcer = policy.Enforcer(
            conf, policy_file=str(policy_file or os.devnull), use_conf=True
        )
        defaults = [
            policy.RuleDefault(name, check, description=text)
            for name, (check, text) in BASE_RULES.items()
        ]
        seen = set(BASE_RULES)
        for method, path in routes:
            name = rule_name(method, path)
            if name not in seen:
                seen.add(name)
                defaults.append(
                    policy.RuleDefault(name, default_check(name, method), description=path)
                )
        self._enforcer.register_defaults(defaults)
        self._enforcer.load_rules()

    def rules(self) -> dict[str, str]:
        """Every rule in force, by name (the defaults with the operator's changes)."""
        return {name: str(rule) for name, rule in self._enforcer.rules.items()}

    def allowed(self, rule: str, credentials: dict[str, object]) -> bool:
        target = {"project_id": credentials.get("project_id")}
        return bool(self._enforcer.enforce(rule, target, credentials, do_raise=False))

    def authorize(self, rule: str, credentials: dict[str, object]) -> None:
        """Raises:
        Forbidden: the rule refuses these credentials (Senlin's text).
        """
        if not self.allowed(rule, credentials):
            raise Forbidden(FORBIDDEN)
