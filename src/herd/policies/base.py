"""The contract every policy plugin fulfils.

A policy is a pure function of a frozen :class:`PolicyContext`: it reads the
cluster snapshot, the action's inputs and the data earlier policies wrote, and
returns a :class:`Decision` (the action's new data plus a status and reason).
It never touches the database, the network, a clock or a random source; the
engine passes ``now`` and ``seed`` in, so every decision can be replayed.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from herd.domain.snapshots import ClusterSnapshot
from herd.policies.spec import Field, validate_properties
from herd.types import ActionCause, ActionName, CheckStatus, Phase


@dataclass(frozen=True)
class PolicyContext:
    """Everything a policy may look at when it is checked."""

    action: ActionName
    phase: Phase
    cluster: ClusterSnapshot
    inputs: Mapping[str, object]
    data: Mapping[str, object]
    now: float
    seed: int
    cause: ActionCause = ActionCause.RPC
    target_node_id: str | None = None
    last_op: float | None = None  # when this binding last let an action through
    max_nodes_per_cluster: int = 1000
    action_id: str = ""  # the action being checked (a binding may record who changed it)
    #: the checked binding's stored data (what its attach or earlier checks recorded)
    binding_data: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Decision:
    """What a policy decided: a check status, a reason and the action's new data."""

    status: CheckStatus
    reason: str = ""
    data: dict[str, object] = field(default_factory=dict)
    touch_last_op: bool = False  # the engine stamps the binding's last_op when True
    #: what the policy explains about its decision (e.g. each victim's rule); unlike
    #: ``data`` it is not stored as the action's data, whose keys Senlin's spec fixes
    notes: dict[str, object] = field(default_factory=dict)
    #: keys the engine merges into the binding's stored ``data`` (visible to the health manager)
    binding_data: Mapping[str, object] | None = None

    @classmethod
    def ok(
        cls,
        data: Mapping[str, object],
        reason: str = "",
        *,
        notes: Mapping[str, object] | None = None,
    ) -> Decision:
        return cls(CheckStatus.OK, reason, dict(data), notes=dict(notes or {}))

    @classmethod
    def error(cls, data: Mapping[str, object], reason: str) -> Decision:
        return cls(CheckStatus.ERROR, reason, dict(data))

    @classmethod
    def skip(cls, data: Mapping[str, object]) -> Decision:
        return cls(CheckStatus.NONE, "", dict(data))


class Policy(ABC):
    """Base class of policy plugins.

    Subclasses set the class attributes (``schema`` among them), add the checks
    the schema cannot express in ``check_properties`` (raising
    :class:`herd.errors.InvalidSpec` naming the key and the reason), and
    implement ``before``/``after``.
    """

    #: family name without version, e.g. ``senlin.policy.deletion``
    type_name: ClassVar[str]
    #: versions this class accepts, e.g. ``("1.0", "1.1")``
    versions: ClassVar[tuple[str, ...]]
    priority: ClassVar[int]
    singleton: ClassVar[bool] = True
    targets: ClassVar[frozenset[tuple[Phase, ActionName]]]
    #: profile types the policy can be attached to (``ANY`` for all)
    profile_types: ClassVar[tuple[str, ...]] = ("ANY",)
    #: why other profile types are refused, appended to Senlin's attach error
    profile_type_reason: ClassVar[str] = ""
    #: the spec's ``properties``, as Senlin's schema (also what ``policy-type show`` describes)
    schema: ClassVar[dict[str, Field]]

    def __init__(self, properties: Mapping[str, object]) -> None:
        self.properties: dict[str, object] = self.validate_properties(properties)

    @classmethod
    def validate_properties(cls, properties: Mapping[str, object]) -> dict[str, object]:
        """Return the properties with defaults filled in, or raise InvalidSpec."""
        return cls.check_properties(validate_properties(cls.schema, properties), properties)

    @classmethod
    def check_properties(
        cls, validated: dict[str, object], properties: Mapping[str, object]
    ) -> dict[str, object]:
        """What the schema cannot say: raise InvalidSpec, or return ``validated`` (completed)."""
        return validated

    def outbound_urls(self) -> list[tuple[str, str]]:
        """The URLs herd will call for the tenant, as ``(spec field, url)`` pairs.

        The API checks them against the outbound guard when the policy is created.
        """
        return []

    def applies_to(self, action: ActionName, phase: Phase) -> bool:
        return (phase, action) in self.targets

    def before(self, ctx: PolicyContext) -> Decision:
        return Decision.skip(ctx.data)

    def after(self, ctx: PolicyContext) -> Decision:
        return Decision.skip(ctx.data)
