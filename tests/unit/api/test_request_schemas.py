"""Typed request bodies: Senlin's texts, the order errors are reported in, one boolean parser."""

from __future__ import annotations

from typing import Any

import pytest

from herd.api.schemas.base import parse_body
from herd.api.schemas.cluster_actions import (
    DelNodesParams,
    RecoverParams,
    ResizeParams,
    ScaleInParams,
    ScaleOutParams,
)
from herd.api.schemas.clusters import ClusterCreate
from herd.api.schemas.member_health import MarkUnhealthy
from herd.api.schemas.nodes import NodeCreate, NodeUpdate
from herd.domain.sizing import ResizeRequest, SizeBounds, validate_resize_request
from herd.domain.values import BOOL_FALSE, BOOL_TRUE, parse_bool
from herd.errors import InvalidRequest
from herd.store.models import NodeRow
from herd.store.snapshots import node_snapshot
from herd.types import AdjustmentType

EXACT = AdjustmentType.EXACT_CAPACITY.value
CHANGE = AdjustmentType.CHANGE_IN_CAPACITY.value
PCT = AdjustmentType.CHANGE_IN_PERCENTAGE.value
CLUSTER = SizeBounds(min_size=10, max_size=20, desired_capacity=15)
BOOL_TEXT = (
    "Unrecognized value 'maybe', acceptable values are: '0', '1', 'f', 'false', 'n', "
    "'no', 'off', 'on', 't', 'true', 'y', 'yes'"
)


def error_of(model: Any, raw: Any, **kwargs: Any) -> tuple[str, str | None]:
    with pytest.raises(InvalidRequest) as info:
        parse_body(model, raw, **kwargs)
    return info.value.message, info.value.field


def resize(body: dict[str, Any], current: int = 15) -> dict[str, Any]:
    """A resize body through its schema and Senlin's cross-field rules, as the API runs it."""
    params = parse_body(ResizeParams, body, context={"max_nodes_per_cluster": 100})
    request = ResizeRequest(**params.model_dump(exclude={"seed"}))
    return validate_resize_request(request, CLUSTER, current, 100)


@pytest.mark.parametrize(
    ("body", "message", "field"),
    [
        ({}, "Not enough parameters to do resize action.", None),
        ({"strict": True, "min_step": 1}, "Not enough parameters to do resize action.", None),
        ({"adjustment_type": EXACT}, "Missing number value for size adjustment.", "number"),
        ({"number": 3}, "Missing adjustment_type value for size adjustment.", "adjustment_type"),
        (
            {"adjustment_type": "BOGUS", "number": 1},
            "Value 'BOGUS' is not acceptable for field 'adjustment_type'.",
            "adjustment_type",
        ),
        (
            {"adjustment_type": PCT, "number": 10, "min_step": -1},
            "Value must be >= 0 for field 'min_step'.",
            "min_step",
        ),
        # Senlin's min_step is a NonNegativeIntegerField whatever the adjustment type.
        (
            {"adjustment_type": CHANGE, "number": 1, "min_step": -5},
            "Value must be >= 0 for field 'min_step'.",
            "min_step",
        ),
        ({"min_size": "abc"}, "The value for min_size must be an integer: 'abc'.", "min_size"),
        (
            {"min_size": -1},
            "The value for the min_size field must be greater than or equal to 0.",
            "min_size",
        ),
        (
            {"max_size": 101},
            "The value for the max_size field must be less than or equal to 100.",
            "max_size",
        ),
        (
            {"min_size": 12, "max_size": 11},
            "The specified min_size (12) is greater than the specified max_size (11).",
            "min_size",
        ),
        (
            {"adjustment_type": EXACT, "number": -1},
            "The 'number' must be non-negative integer for adjustment type 'EXACT_CAPACITY'.",
            "number",
        ),
        (
            {"adjustment_type": CHANGE, "number": -10},
            "The target capacity (5) is less than the cluster's min_size (10).",
            None,
        ),
        ({"adjustment_type": CHANGE, "number": 2, "strict": "maybe"}, BOOL_TEXT, "strict"),
        (
            {"adjustment_type": CHANGE, "number": "x"},
            "The value for number must be a number: 'x'.",
            "number",
        ),
        (
            {"adjustment_type": CHANGE, "number": 1, "bogus": 1},
            "Additional properties are not allowed ('bogus' was unexpected)",
            "bogus",
        ),
    ],
)
def test_resize_request_errors(body: dict[str, Any], message: str, field: str | None) -> None:
    with pytest.raises(InvalidRequest) as info:
        resize(body)
    assert info.value.message == message
    assert info.value.field == field


def test_resize_request_defaults_strict_true_and_truncates_number() -> None:
    stored = resize({"adjustment_type": CHANGE, "number": 2.7})
    assert stored == {
        "adjustment_type": "CHANGE_IN_CAPACITY",
        "number": 2,
        "min_size": None,
        "max_size": None,
        "min_step": None,
        "strict": True,
    }


def test_resize_request_min_step_only_for_percentage() -> None:
    assert resize({"adjustment_type": CHANGE, "number": 1, "min_step": 5})["min_step"] is None
    assert resize({"adjustment_type": PCT, "number": 10, "min_step": "2"})["min_step"] == 2


def test_resize_request_non_strict_skips_cluster_bounds() -> None:
    stored = resize({"adjustment_type": CHANGE, "number": -10, "strict": "no"})
    assert stored["strict"] is False


@pytest.mark.parametrize(
    ("model", "value", "message"),
    [
        (ScaleInParams, 0, "Count for scale-in request cannot be 0."),
        (ScaleOutParams, 0, "Count for scale-out request cannot be 0."),
        (ScaleInParams, -1, "Value must be >= 0 for field 'count'."),
        (ScaleInParams, "tt", "The value for count must be an integer: 'tt'."),
        (ScaleInParams, 1.5, "The value for count must be an integer: '1.5'."),
        (ScaleInParams, True, "The value for count must be an integer: 'True'."),
    ],
)
def test_scale_count_errors(model: Any, value: Any, message: str) -> None:
    assert error_of(model, {"count": value}) == (message, "count")


def test_scale_count_ok() -> None:
    assert parse_body(ScaleInParams, None).count is None
    assert parse_body(ScaleOutParams, {"count": "3"}).count == 3
    assert parse_body(ScaleOutParams, {"count": 4.0}).count == 4


def test_unknown_keys_come_before_missing_and_bad_values() -> None:
    body = {"cluster": {"name": "c", "min_size": "x", "zz": 1, "aa": 2}}
    assert error_of(ClusterCreate, body, envelope="cluster") == (
        "Additional properties are not allowed ('aa', 'zz' were unexpected)",
        "aa",
    )
    body = {"cluster": {"name": "c", "min_size": "x"}}
    assert error_of(ClusterCreate, body, envelope="cluster") == (
        "'profile_id' is a required property",
        "profile_id",
    )
    body = {"cluster": {"name": "c", "profile_id": "p", "min_size": "x"}}
    assert error_of(ClusterCreate, body, envelope="cluster") == (
        "The value for min_size must be an integer: 'x'.",
        "min_size",
    )


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (None, "Malformed request data, missing 'cluster' key in request body."),
        ({"cluster": None}, "Malformed request data, missing 'cluster' key in request body."),
        ([1], "Malformed request data, missing 'cluster' key in request body."),
        ({"cluster": [1]}, "The data provided is not a map"),
    ],
)
def test_envelope_errors(raw: Any, message: str) -> None:
    assert error_of(ClusterCreate, raw, envelope="cluster")[0] == message


def test_a_request_objects_missing_envelope_has_senlins_other_text() -> None:
    error = error_of(ClusterCreate, {}, envelope="cluster", request_object=True)
    assert error == ("Request body missing 'cluster' key.", "cluster")


def test_run_time_maximum_comes_from_the_context() -> None:
    body = {"cluster": {"name": "c", "profile_id": "p", "max_size": 50}}
    assert parse_body(ClusterCreate, body, envelope="cluster").max_size == 50
    assert error_of(
        ClusterCreate, body, envelope="cluster", context={"max_nodes_per_cluster": 10}
    ) == (
        "The value for the max_size field must be less than or equal to 10.",
        "max_size",
    )


def test_action_params_that_are_not_a_map_name_the_action_in_the_field() -> None:
    # Senlin's text names no key (senlin-tempest-plugin's *_params_not_dict tests)
    assert error_of(ScaleInParams, [1], label="scale_in") == (
        "The data provided is not a map",
        "scale_in",
    )


def test_node_lists_and_recover_operations() -> None:
    assert (
        error_of(DelNodesParams, {"nodes": []})[0]
        == "Value for 'nodes' must have at least 1 item(s)."
    )
    assert error_of(DelNodesParams, {"nodes": ["a", "a"]})[0] == "Items for 'nodes' must be unique"
    assert error_of(DelNodesParams, {"nodes": "a"})[0] == "The value 'a' is not a list for 'nodes'."
    # Senlin reads a missing list as an empty one (test_cluster_del_nodes_missing_nodes_params)
    assert error_of(DelNodesParams, {})[0] == "Value for 'nodes' must have at least 1 item(s)."
    assert parse_body(RecoverParams, {"operation": "reboot"}).operation == "REBOOT"
    assert error_of(RecoverParams, {"operation": "dance"})[0] == (
        "Operation value 'dance' has to be one of the following: REBOOT, REBUILD, RECREATE."
    )


def test_mark_unhealthy_keeps_heat_texts() -> None:
    assert error_of(MarkUnhealthy, {"b": 1, "a": 2}) == (
        "Invalid keys in resource mark unhealthy {'a', 'b'}",
        "a",
    )
    assert error_of(MarkUnhealthy, {"resource_status_reason": "x"}) == (
        "Missing mandatory (mark_unhealthy) key from mark unhealthy request",
        "mark_unhealthy",
    )
    assert error_of(MarkUnhealthy, {"mark_unhealthy": "yes"})[0] == (
        'Unrecognized value "yes" for "mark_unhealthy", acceptable values are: true, false.'
    )
    assert error_of(MarkUnhealthy, [1])[0] == (
        "The request body must be a JSON object with a 'mark_unhealthy' key."
    )
    assert parse_body(MarkUnhealthy, {"mark_unhealthy": "TRUE"}).mark_unhealthy is True


@pytest.mark.parametrize("word", BOOL_TRUE + BOOL_FALSE)
def test_one_boolean_parser_for_bodies_and_node_metadata(word: str) -> None:
    expected = word in BOOL_TRUE
    update = parse_body(NodeUpdate, {"tainted": word, "metadata": {"protected": word}})
    assert update.tainted is expected
    assert update.metadata is not None
    row = NodeRow(
        id="n",
        name="n",
        index=1,
        status="ACTIVE",
        health="UNKNOWN",
        tainted=False,
        meta_data=update.metadata,
        data={},
    )
    # The victim ranking reads the same word the same way.
    assert node_snapshot(row).protected is expected
    assert parse_bool(word.upper()) is expected


def test_node_metadata_that_ranking_cannot_read_is_refused() -> None:
    base = {"name": "n", "profile_id": "p"}
    assert error_of(NodeCreate, {**base, "metadata": {"protected": "maybe"}})[0] == (
        "metadata.protected: " + BOOL_TEXT
    )
    assert error_of(NodeCreate, {**base, "metadata": {"deletion_cost": "high"}})[0] == (
        "metadata.deletion_cost: 'high' is not a number."
    )
    assert parse_body(NodeCreate, {**base, "metadata": {"deletion_cost": "2.5"}}).metadata == {
        "deletion_cost": "2.5"
    }
