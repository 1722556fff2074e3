"""The affinity policy's attach and detach I/O (herd.engine.server_groups), crash cases included.

The real Nova path is tests/e2e/nova/test_nova_affinity.py. What a real cloud cannot show on
demand is an engine dying between Nova making the group and herd storing that it did: here the
driver is an in-memory stand-in for Nova's server groups and the action keeps its steps in a
dict, so a "resumed" run is a second run over the steps the first one stored.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pytest

from herd.drivers.base import ServerGroup
from herd.engine import server_groups
from herd.errors import DriverError
from herd.policies.affinity import AffinityPolicy
from herd.policies.registry import default_policy_registry

T = TypeVar("T")
PROPERTIES: dict[str, Any] = {"flavor": "m1.tiny", "image": "cirros"}


class Groups:
    """Nova's server groups of one project, in memory."""

    def __init__(self) -> None:
        self.groups: dict[str, ServerGroup] = {}
        self.created = 0
        self.fail_delete = False

    def find_server_group(self, name_or_id: str, _props: Mapping[str, Any]) -> ServerGroup | None:
        return next((g for g in self.groups.values() if name_or_id in (g.id, g.name)), None)

    def create_server_group(self, name: str, policy: str, _props: Mapping[str, Any]) -> ServerGroup:
        self.created += 1
        group = ServerGroup(f"g{self.created}", name, policy)
        self.groups[group.id] = group
        return group

    def delete_server_group(self, group_id: str, _props: Mapping[str, Any]) -> None:
        if self.fail_delete:
            raise DriverError("deleting the server group: Nova is away (HTTP 503)")
        self.groups.pop(group_id, None)


@dataclass
class Run:
    """The parts of ActionExecution the module uses: its id, its stored steps, the drivers."""

    driver: Groups
    id: str = "a1b2c3d4-0000-0000-0000-000000000000"
    steps: dict[str, Any] = field(default_factory=dict)
    crash_after: str | None = None  # the step whose result is lost (the engine died)

    @property
    def ctx(self) -> Any:
        driver = self.driver

        class Drivers:
            def get(self, _type: str) -> Groups:
                return driver

        return type("Ctx", (), {"drivers": Drivers()})()

    def once(self, key: str, compute: Callable[[], T]) -> T:
        if key in self.steps:
            return self.steps[key]  # type: ignore[no-any-return]
        value = compute()
        if key == self.crash_after:
            raise SystemExit("engine killed")
        self.steps[key] = value
        return value


@pytest.fixture(autouse=True)
def _profile(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        server_groups, "profile_of", lambda _ex, _id: ("os.nova.server-1.0", PROPERTIES)
    )


def _policy(**properties: Any) -> AffinityPolicy:
    spec = {"type": "senlin.policy.affinity", "version": "1.0", "properties": properties}
    policy = default_policy_registry().create(spec)[1]
    assert isinstance(policy, AffinityPolicy)
    return policy


def test_an_attach_killed_after_nova_made_the_group_finds_it_when_resumed() -> None:
    nova = Groups()
    first = Run(nova, crash_after="servergroup_made")
    with pytest.raises(SystemExit):
        server_groups.attach_group(first, _policy(), "p")  # type: ignore[arg-type]
    assert list(nova.groups.values()) == [
        ServerGroup("g1", "server_group_a1b2c3d4", "anti-affinity")
    ]
    resumed = Run(nova, steps=dict(first.steps))
    data = server_groups.attach_group(resumed, _policy(), "p")  # type: ignore[arg-type]
    assert data == {"servergroup_id": "g1", "inherited_group": False}
    assert nova.created == 1  # not a second group


def test_a_named_group_is_inherited_and_outlives_the_detach() -> None:
    nova = Groups()
    existing = nova.create_server_group("web", "affinity", PROPERTIES)
    run = Run(nova)
    named = _policy(servergroup={"name": "web", "policies": "affinity"})
    data = server_groups.attach_group(run, named, "p")  # type: ignore[arg-type]
    assert data == {"servergroup_id": existing.id, "inherited_group": True}
    assert server_groups.release_group(run, data, "p") is None  # type: ignore[arg-type]
    assert existing.id in nova.groups


def test_a_group_herd_made_goes_at_detach_and_a_failure_says_why() -> None:
    nova = Groups()
    run = Run(nova)
    data = server_groups.attach_group(run, _policy(), "p")  # type: ignore[arg-type]
    assert isinstance(data, dict)
    nova.fail_delete = True
    reason = server_groups.release_group(run, data, "p")  # type: ignore[arg-type]
    assert reason == (
        "Failed in deleting servergroup: deleting the server group: Nova is away (HTTP 503)"
    )
    nova.fail_delete = False
    assert server_groups.release_group(run, data, "p") is None  # type: ignore[arg-type]
    assert nova.groups == {}
