"""The policy-type registry: versioned type names to policy classes.

Owned by whoever builds the application context; there is no module-level
registry. ``default_policy_registry()`` returns a fresh one with the built-ins.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from herd.errors import InvalidSpec, NotFound
from herd.policies.affinity import AffinityPolicy
from herd.policies.base import Policy
from herd.policies.batch import BatchPolicy
from herd.policies.deletion import DeletionPolicy
from herd.policies.health import HealthPolicy
from herd.policies.placement import RegionPlacementPolicy, ZonePlacementPolicy
from herd.policies.scaling import ScalingPolicy
from herd.policies.spec import parse_spec

_VERSIONED = re.compile(r"^(?P<name>.+)-(?P<version>\d+(?:\.\d+)*)$")


def split_type(full_type: str) -> tuple[str, str | None]:
    """Split ``senlin.policy.deletion-1.1`` into ``('senlin.policy.deletion', '1.1')``."""
    match = _VERSIONED.match(full_type)
    if match is None:
        return full_type, None
    return match["name"], match["version"]


def named_key(error: InvalidSpec) -> InvalidSpec:
    """The error with its message led by the dotted key, as profile errors have it.

    ``properties.criteria: 'NEWEST' must be one of the allowed values: ...``: Senlin's text
    alone does not say which of a spec's keys is wrong (several take the same values).
    """
    field = error.field
    if not field or error.message.startswith(f"{field}:"):
        return error
    return InvalidSpec(f"{field}: {error.message}", field=field)


class PolicyRegistry:
    """Maps ``(type name, version)`` to a :class:`Policy` subclass, plus aliases."""

    def __init__(self) -> None:
        self._classes: dict[tuple[str, str], type[Policy]] = {}
        self._aliases: dict[tuple[str, str | None], tuple[str, str | None]] = {}

    def register(self, cls: type[Policy]) -> type[Policy]:
        """Register every version ``cls`` declares; returns ``cls`` (usable as a decorator)."""
        for version in cls.versions:
            key = (cls.type_name, version)
            existing = self._classes.get(key)
            if existing is not None and existing is not cls:
                raise ValueError(f"Policy type {cls.type_name}-{version} is already registered.")
            self._classes[key] = cls
        return cls

    def alias(self, alias_type: str, target_type: str) -> None:
        """Make ``alias_type`` resolve to ``target_type``.

        Either both carry a version (``herd.policy.deletion-1.1`` ->
        ``senlin.policy.deletion-1.1``) or neither does, in which case every
        version of the target is reachable under the alias name.
        """
        alias_name, alias_version = split_type(alias_type)
        target_name, target_version = split_type(target_type)
        if (alias_version is None) != (target_version is None):
            raise ValueError("Alias and target must both have a version, or neither.")
        self._aliases[(alias_name, alias_version)] = (target_name, target_version)

    def _canonical(self, type_name: str, version: str) -> tuple[str, str]:
        if (type_name, version) in self._aliases:
            name, target_version = self._aliases[(type_name, version)]
            return name, target_version or version
        if (type_name, None) in self._aliases:
            return self._aliases[(type_name, None)][0], version
        return type_name, version

    def resolve(self, type_name: str, version: str) -> type[Policy]:
        """Return the class for a type name and version.

        Raises:
            InvalidSpec: For an unknown type or an unsupported version.
        """
        name, canonical_version = self._canonical(type_name, version)
        cls = self._classes.get((name, canonical_version))
        if cls is not None:
            return cls
        known = self.supported_versions(type_name)
        if not known:
            # a type nobody provides: Senlin's 404 and text (ResourceNotFound)
            raise NotFound("policy_type", f"{type_name}-{version}")
        raise InvalidSpec(
            f"The specified version ({version}) of policy type ({type_name}) is not "
            f"supported. Supported versions: {', '.join(known)}.",
            field="version",
        )

    def resolve_full(self, full_type: str) -> type[Policy]:
        """Resolve ``<name>-<version>`` as stored in a policy row."""
        name, version = split_type(full_type)
        if version is None:
            raise InvalidSpec(
                f"The specified policy type ({full_type}) is not supported.", field="type"
            )
        return self.resolve(name, version)

    def supported_versions(self, type_name: str) -> list[str]:
        """Versions reachable under a type name (or alias), sorted."""
        names = {type_name} | {
            target for (alias, _), (target, _) in self._aliases.items() if alias == type_name
        }
        versions = {v for (n, v) in self._classes if n in names}
        versioned = {
            av for (alias, av), (_, tv) in self._aliases.items() if alias == type_name and av
        }
        return sorted(versions | versioned, key=lambda v: tuple(int(p) for p in v.split(".")))

    def canonical_type(self, type_name: str, version: str) -> str:
        """The stored type string, e.g. ``senlin.policy.deletion-1.1``."""
        self.resolve(type_name, version)
        name, canonical_version = self._canonical(type_name, version)
        return f"{name}-{canonical_version}"

    def create(self, spec: Mapping[str, object] | str | bytes) -> tuple[str, Policy]:
        """Validate a spec and build the policy.

        Returns:
            The canonical versioned type string and the policy instance.

        Raises:
            InvalidSpec: For any problem, naming the field.
        """
        parsed = parse_spec(spec)
        cls = self.resolve(parsed.type, parsed.version)
        try:
            policy = cls(parsed.properties)
        except InvalidSpec as exc:
            raise named_key(exc) from None
        return self.canonical_type(parsed.type, parsed.version), policy

    def types(self) -> list[dict[str, object]]:
        """The registered types for ``GET /v1/policy-types`` (aliases left out)."""
        rows: list[dict[str, object]] = []
        for (name, version), cls in sorted(self._classes.items()):
            status: Mapping[str, list[dict[str, str]]] = getattr(cls, "support_status", {})
            rows.append(
                {
                    "name": f"{name}-{version}",
                    "version": version,
                    "support_status": {version: list(status.get(version, []))},
                }
            )
        return rows


def default_policy_registry() -> PolicyRegistry:
    """A new registry holding herd's built-in policies and their ``herd.policy.*`` aliases."""
    registry = PolicyRegistry()
    for cls in (
        ScalingPolicy,
        RegionPlacementPolicy,
        ZonePlacementPolicy,
        DeletionPolicy,
        HealthPolicy,
        BatchPolicy,
        AffinityPolicy,
    ):
        registry.register(cls)
        family = cls.type_name.removeprefix("senlin.policy.")
        registry.alias(f"herd.policy.{family}", cls.type_name)
    registry.alias("herd.policy.deletion-1.1", "senlin.policy.deletion-1.1")
    return registry
