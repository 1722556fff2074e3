"""A cluster's status from its members: Senlin's texts, and ACTIVE only when every member is."""

from __future__ import annotations

import pytest

from herd.domain.cluster_status import cluster_status_after, not_active_note
from herd.types import ClusterStatus


def _op(statuses: dict[str, int]) -> tuple[ClusterStatus, str]:
    # min_size 2, desired 4, max_size 5
    return cluster_status_after("CLUSTER_SCALE_IN", statuses, 2, 4, 5)


@pytest.mark.parametrize(
    ("active", "status", "reason"),
    [
        (1, ClusterStatus.ERROR, "CLUSTER_SCALE_IN: number of active nodes is below min_size (2)."),
        (
            3,
            ClusterStatus.WARNING,
            "CLUSTER_SCALE_IN: number of active nodes is below desired_capacity (4).",
        ),
        (
            4,
            ClusterStatus.ACTIVE,
            "CLUSTER_SCALE_IN: number of active nodes is equal or above desired_capacity (4).",
        ),
        (
            6,
            ClusterStatus.WARNING,
            "CLUSTER_SCALE_IN: number of active nodes is above max_size (5).",
        ),
    ],
)
def test_all_members_active_keeps_senlins_texts(
    active: int, status: ClusterStatus, reason: str
) -> None:
    assert _op({"ACTIVE": active}) == (status, reason)


def test_unbounded_max_size() -> None:
    assert cluster_status_after("NODE_DELETE", {"ACTIVE": 9}, 0, 4, -1)[0] is ClusterStatus.ACTIVE


def test_a_crash_looping_only_member_makes_the_cluster_error() -> None:
    # issue 24: the only member ERROR (in back-off) said ACTIVE "equal or above ... (1)",
    # then WARNING; nothing of the cluster works, so it is ERROR (min_size 0 or not)
    status, reason = cluster_status_after("HEALTH_CHECK", {"ERROR": 1}, 0, 1, -1)
    assert status is ClusterStatus.ERROR
    assert reason == (
        "HEALTH_CHECK: no node is ACTIVE (desired_capacity 1). 1 of 1 node not ACTIVE (1 ERROR)."
    )


def test_no_working_member_is_error_whatever_the_members_statuses() -> None:
    status, reason = cluster_status_after(
        "CLUSTER_CREATE", {"ERROR": 2, "WARNING": 1, "RECOVERING": 1}, 0, 3, -1
    )
    assert status is ClusterStatus.ERROR
    assert reason == (
        "CLUSTER_CREATE: no node is ACTIVE (desired_capacity 3). "
        "4 of 4 nodes not ACTIVE (2 ERROR, 1 RECOVERING, 1 WARNING)."
    )


def test_a_cluster_wanting_members_and_having_none_is_error() -> None:
    assert cluster_status_after("CLUSTER_DEL_NODES", {}, 0, 2, -1) == (
        ClusterStatus.ERROR,
        "CLUSTER_DEL_NODES: no node is ACTIVE (desired_capacity 2). The cluster has no members.",
    )


def test_one_working_member_of_many_is_a_warning() -> None:
    status, _ = cluster_status_after("HEALTH_CHECK", {"ACTIVE": 1, "ERROR": 4}, 0, 5, -1)
    assert status is ClusterStatus.WARNING


def test_below_min_size_is_error_and_names_the_members() -> None:
    status, reason = _op({"ACTIVE": 1, "ERROR": 2, "RECOVERING": 1})
    assert status is ClusterStatus.ERROR
    assert reason == (
        "CLUSTER_SCALE_IN: number of active nodes is below min_size (2). "
        "3 of 4 nodes not ACTIVE (2 ERROR, 1 RECOVERING)."
    )


def test_enough_active_members_but_one_broken_is_a_warning() -> None:
    # Senlin said ACTIVE here: four ACTIVE members cover desired_capacity 4
    status, reason = _op({"ACTIVE": 4, "ERROR": 1})
    assert status is ClusterStatus.WARNING
    assert reason == "CLUSTER_SCALE_IN: 1 of 5 nodes not ACTIVE (1 ERROR)."


def test_an_empty_cluster_wanting_none_is_active() -> None:
    assert cluster_status_after("CLUSTER_CREATE", {}, 0, 0, -1)[0] is ClusterStatus.ACTIVE


def test_the_note_ignores_zero_counts() -> None:
    assert not_active_note({"ACTIVE": 2, "ERROR": 0}) == ""
    assert not_active_note({"WARNING": 1, "ACTIVE": 1}) == "1 of 2 nodes not ACTIVE (1 WARNING)."
