"""Senlin's resize arithmetic: desired capacity, truncation and size checks.

Every text here is Senlin's (``senlin/common/scaleutils.py`` at 16.0.0 and the
resize/scale validation of its API and conductor), so that clients see the same
messages. Two deliberate fixes, both documented in ``docs/policies.md``:

* ``parse_resize`` uses the ``current`` it is given, even 0. Senlin wrote
  ``current = current or cluster.desired_capacity``, so an empty cluster was
  treated as if it still had ``desired_capacity`` members.
* ``truncate_desired`` treats a ``max_size`` of 0 as a cap of 0 (and only -1 as
  unbounded), as ``check_size_params`` always did. Senlin's truncation treated
  0 as "no limit" and then failed the check it had just prepared for.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from herd.errors import InvalidRequest
from herd.json_types import int_or_none, number_or_none, str_or_none
from herd.types import AdjustmentType


class ClusterSize(Protocol):
    """The size fields of a cluster (a ``ClusterSnapshot`` satisfies it)."""

    @property
    def min_size(self) -> int: ...

    @property
    def max_size(self) -> int: ...

    @property
    def desired_capacity(self) -> int: ...


@dataclass(frozen=True, slots=True)
class SizeBounds:
    """Plain size values, for callers that have no snapshot at hand."""

    min_size: int
    max_size: int
    desired_capacity: int


@dataclass(frozen=True, slots=True)
class ResizePlan:
    """The outcome of parsing a CLUSTER_RESIZE request against a cluster.

    Exactly one of ``error`` or ``desired`` is meaningful: when ``error`` is set
    the request is refused with that text.
    """

    desired: int
    current: int
    min_size: int | None = None
    max_size: int | None = None
    error: str | None = None

    @property
    def deletion_count(self) -> int:
        """Nodes to remove (0 unless the resize shrinks the cluster)."""
        return max(self.current - self.desired, 0)

    @property
    def creation_count(self) -> int:
        """Nodes to add (0 unless the resize grows the cluster)."""
        return max(self.desired - self.current, 0)

    @property
    def is_shrink(self) -> bool:
        return self.error is None and self.current > self.desired

    def to_data(self) -> dict[str, dict[str, int]]:
        """Senlin's action-data shape: ``deletion`` when shrinking, else ``creation``.

        As in Senlin, an unchanged size still yields ``{'creation': {'count': 0}}``.
        """
        if self.is_shrink:
            return {"deletion": {"count": self.deletion_count}}
        return {"creation": {"count": self.creation_count}}


def calculate_desired(
    current: int, adjustment_type: AdjustmentType | str, number: float, min_step: int | None
) -> int:
    """Return the desired capacity a resize or scaling adjustment asks for.

    Args:
        current: The number of nodes the cluster has now.
        adjustment_type: EXACT_CAPACITY, CHANGE_IN_CAPACITY or CHANGE_IN_PERCENTAGE.
        number: The adjustment; a percentage for CHANGE_IN_PERCENTAGE.
        min_step: For percentages, the smallest change to make (None or 0: none).

    Returns:
        The new desired capacity. Percentages below one node round away from
        zero to one node; larger ones are truncated toward zero (Senlin's rule).
    """
    kind = AdjustmentType(adjustment_type)
    if kind is AdjustmentType.EXACT_CAPACITY:
        return int(number)
    if kind is AdjustmentType.CHANGE_IN_CAPACITY:
        return current + int(number)
    delta = number * current / 100.0
    if delta > 0.0:
        rounded = int(math.ceil(delta) if abs(delta) < 1.0 else math.floor(delta))
    else:
        rounded = int(math.floor(delta) if abs(delta) < 1.0 else math.ceil(delta))
    if min_step is not None and min_step > abs(rounded):
        # Senlin's sign rule: a zero change counts as a shrink.
        return current + (min_step if rounded > 0 else -min_step)
    return current + rounded


def truncate_desired(
    cluster: ClusterSize, desired: int, min_size: int | None, max_size: int | None
) -> int:
    """Clamp ``desired`` into the new (or else the cluster's) size range.

    Used only for non-strict resizes. A max of -1 means unbounded; unlike
    Senlin, a max of 0 is a real cap (see the module docstring).
    """
    if min_size is not None and desired < min_size:
        desired = min_size
    if min_size is None and desired < cluster.min_size:
        desired = cluster.min_size
    if max_size is not None and max_size >= 0 and desired > max_size:
        desired = max_size
    if max_size is None and cluster.max_size >= 0 and desired > cluster.max_size:
        desired = cluster.max_size
    return desired


def check_size_params(
    cluster: ClusterSize,
    desired: int | None,
    min_size: int | None,
    max_size: int | None,
    strict: bool,
    max_nodes_per_cluster: int,
) -> str | None:
    """Check a target size and new bounds against each other and the cluster.

    Args:
        cluster: The cluster's current size fields.
        desired: The target capacity, or None for a pure min/max change.
        min_size: The new min_size, or None to keep the cluster's.
        max_size: The new max_size (-1: unbounded), or None to keep the cluster's.
        strict: Also check against the cluster's current bounds and capacity.
        max_nodes_per_cluster: The service-wide cap on a cluster's size.

    Returns:
        Senlin's error text for the first failed check, or None when all pass.
    """
    if desired is not None:
        if desired > max_nodes_per_cluster:
            return (
                f"The target capacity ({desired}) is greater than the maximum number of "
                f"nodes allowed per cluster ({max_nodes_per_cluster})."
            )
        if min_size is not None and desired < min_size:
            return (
                f"The target capacity ({desired}) is less than the specified min_size ({min_size})."
            )
        if min_size is None and strict and desired < cluster.min_size:
            return (
                f"The target capacity ({desired}) is less than the cluster's min_size "
                f"({cluster.min_size})."
            )
        if max_size is not None and max_size >= 0 and desired > max_size:
            return (
                f"The target capacity ({desired}) is greater than the specified max_size "
                f"({max_size})."
            )
        if max_size is None and strict and cluster.max_size >= 0 and desired > cluster.max_size:
            return (
                f"The target capacity ({desired}) is greater than the cluster's max_size "
                f"({cluster.max_size})."
            )
    if min_size is not None:
        if max_size is not None and max_size >= 0 and min_size > max_size:
            return (
                f"The specified min_size ({min_size}) is greater than the specified "
                f"max_size ({max_size})."
            )
        if max_size is None and cluster.max_size >= 0 and min_size > cluster.max_size:
            return (
                f"The specified min_size ({min_size}) is greater than the current max_size "
                f"({cluster.max_size}) of the cluster."
            )
        if desired is None and strict and min_size > cluster.desired_capacity:
            return (
                f"The specified min_size ({min_size}) is greater than the current "
                f"desired_capacity ({cluster.desired_capacity}) of the cluster."
            )
    if max_size is not None:
        if max_size > max_nodes_per_cluster:
            return (
                f"The specified max_size ({max_size}) is greater than the maximum number of "
                f"nodes allowed per cluster ({max_nodes_per_cluster})."
            )
        if min_size is None and max_size >= 0 and max_size < cluster.min_size:
            return (
                f"The specified max_size ({max_size}) is less than the current min_size "
                f"({cluster.min_size}) of the cluster."
            )
        if desired is None and strict and max_size >= 0 and max_size < cluster.desired_capacity:
            return (
                f"The specified max_size ({max_size}) is less than the current "
                f"desired_capacity ({cluster.desired_capacity}) of the cluster."
            )
    return None


def parse_resize(
    current: int, cluster: ClusterSize, inputs: Mapping[str, object], max_nodes_per_cluster: int
) -> ResizePlan:
    """Turn a stored CLUSTER_RESIZE request into a target size (the engine-side parse).

    Args:
        current: The real number of members now (0 is honoured; Senlin's bug fixed).
        cluster: The cluster's current size fields.
        inputs: The action inputs: ``adjustment_type``, ``number``, ``min_size``,
            ``max_size``, ``min_step``, ``strict`` (default False here, as in
            Senlin; the API always stores an explicit value, default True).
        max_nodes_per_cluster: The service-wide cap.

    Returns:
        A plan with the desired size, or with ``error`` set to Senlin's text.
    """
    # The API stored them typed (herd.api.schemas): text, a number and ints, or None
    adjustment_type = str_or_none(inputs, "adjustment_type")
    number = number_or_none(inputs, "number")
    min_size = int_or_none(inputs, "min_size")
    max_size = int_or_none(inputs, "max_size")
    min_step = int_or_none(inputs, "min_step")
    strict = bool(inputs.get("strict", False))
    desired = current
    if adjustment_type is not None:
        desired = calculate_desired(current, adjustment_type, number or 0, min_step)
    if not strict:
        desired = truncate_desired(cluster, desired, min_size, max_size)
    error = check_size_params(cluster, desired, min_size, max_size, strict, max_nodes_per_cluster)
    return ResizePlan(desired, current, min_size, max_size, error)


@dataclass(frozen=True)
class ResizeRequest:
    """A ``resize`` request whose fields are already typed (``herd.api.schemas``)."""

    adjustment_type: str | None = None
    number: float | None = None
    min_size: int | None = None
    max_size: int | None = None
    min_step: int | None = None
    strict: bool | None = None


def check_resize_fields(request: ResizeRequest) -> None:
    """The resize rules that need no cluster (Senlin's API checked them before it looked the
    cluster up: a bad resize of a missing cluster is a 400).

    Raises:
        InvalidRequest: With Senlin's text and the offending field.
    """
    given = (request.adjustment_type, request.number, request.min_size, request.max_size)
    if all(value is None for value in given):
        raise InvalidRequest("Not enough parameters to do resize action.")
    adjustment_type = (
        AdjustmentType(request.adjustment_type) if request.adjustment_type is not None else None
    )
    if adjustment_type is not None and request.number is None:
        raise InvalidRequest("Missing number value for size adjustment.", field="number")
    if adjustment_type is None and request.number is not None:
        raise InvalidRequest(
            "Missing adjustment_type value for size adjustment.", field="adjustment_type"
        )
    min_size, max_size = request.min_size, request.max_size
    if min_size is not None and max_size is not None and max_size > 0 and min_size > max_size:
        raise InvalidRequest(
            f"The specified min_size ({min_size}) is greater than the specified max_size "
            f"({max_size}).",
            field="min_size",
        )
    number = request.number
    if adjustment_type is AdjustmentType.EXACT_CAPACITY and number is not None and number < 0:
        raise InvalidRequest(
            "The 'number' must be non-negative integer for adjustment type "
            f"'{adjustment_type.value}'.",
            field="number",
        )


def validate_resize_request(
    request: ResizeRequest, cluster: ClusterSize, current: int, max_nodes_per_cluster: int
) -> dict[str, object]:
    """Apply Senlin's cross-field rules to a typed resize request.

    Args:
        request: The typed request (each field already coerced and range-checked).
        cluster: The cluster's current size fields.
        current: The real number of members (percentages apply to it).
        max_nodes_per_cluster: The service-wide cap.

    Returns:
        The inputs to store on the action: ``adjustment_type``, ``number``,
        ``min_size``, ``max_size``, ``min_step`` and ``strict``.

    Raises:
        InvalidRequest: With Senlin's text and the offending field.
    """
    check_resize_fields(request)
    adjustment_type = (
        AdjustmentType(request.adjustment_type) if request.adjustment_type is not None else None
    )
    min_size, max_size = request.min_size, request.max_size
    # Senlin forwards min_step only for percentage adjustments.
    percentage = adjustment_type is AdjustmentType.CHANGE_IN_PERCENTAGE
    min_step = request.min_step if percentage else None
    strict = True if request.strict is None else request.strict
    number = request.number
    desired = None
    if adjustment_type is not None and number is not None:
        if not percentage:
            number = int(number)
        desired = calculate_desired(current, adjustment_type, number, min_step)
    error = check_size_params(cluster, desired, min_size, max_size, strict, max_nodes_per_cluster)
    if error:
        raise InvalidRequest(error)
    return {
        "adjustment_type": adjustment_type.value if adjustment_type else None,
        "number": number,
        "min_size": min_size,
        "max_size": max_size,
        "min_step": min_step,
        "strict": strict,
    }
