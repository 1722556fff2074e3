"""MemberTable.patched gives what building the table from the new members would give."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from herd.policies.members import MemberLists, MemberTable
from herd.policies.ranking import KEPT_CRITERIA, rank_victims, rank_victims_by_group
from herd.types import Criteria

STATUSES = ("ACTIVE", "ERROR", "WARNING", "CREATING")
HEALTH = ("UNKNOWN", "CHECK_FAILED", "CHECK_COMPLETE")


def member(node_id: str, index: int, draw: Any) -> dict[str, Any]:
    created = draw(st.one_of(st.none(), st.floats(1.0, 100.0)))
    return {
        "ids": node_id,
        "names": f"n-{node_id}",
        "index": index,
        "status": draw(st.sampled_from(STATUSES)),
        "health": draw(st.sampled_from(HEALTH)),
        "created_at": created,
        "profile_created_at": draw(st.one_of(st.none(), st.floats(1.0, 5.0))),
        "zone": draw(st.sampled_from(("AZ1", "AZ2", None))),
        "region": None,
        "protected": draw(st.booleans()),
        "deletion_cost": draw(st.sampled_from((0.0, 1.0, 2.5))),
        "tainted": draw(st.booleans()),
        "physical_id": f"p-{node_id}",
    }


def table_of(rows: list[dict[str, Any]]) -> MemberTable:
    rows = sorted(rows, key=lambda row: row["index"])
    names = [f.name for f in fields(MemberLists)]
    return MemberTable(MemberLists(**{name: [row[name] for row in rows] for name in names}))


@st.composite
def before_and_after(draw: Any) -> tuple[list[dict[str, Any]], set[str], list[dict[str, Any]]]:
    count = draw(st.integers(0, 30))
    before = [member(f"m{i}", i * 2, draw) for i in range(count)]
    after: list[dict[str, Any]] = []
    changed: set[str] = set()
    # Half the cases only mark members and see some leave (a scale-in): the kept orders
    # are carried; the other half also recreate, move and add members.
    quiet = draw(st.booleans())
    fates = ("same", "marked", "left") if quiet else ("same", "marked", "changed", "moved", "left")
    for row in before:
        fate = draw(st.sampled_from(fates))
        if fate == "same":
            after.append(row)
            continue
        changed.add(row["ids"])
        if fate == "marked":  # a mark or a status change alone: the sort keys stay
            status, health = draw(st.sampled_from(STATUSES)), draw(st.sampled_from(HEALTH))
            after.append({**row, "status": status, "health": health})
        elif fate == "changed":  # a mark or a status change: same index
            after.append(member(row["ids"], row["index"], draw))
        elif fate == "moved":  # another index (odd, so never equal to a kept one)
            after.append(member(row["ids"], draw(st.integers(0, 30)) * 2 + 1, draw))
    for i in range(0 if quiet else draw(st.integers(0, 5))):
        node_id = f"new{i}"
        changed.add(node_id)
        after.append(member(node_id, draw(st.integers(0, 80)) * 2 + 1, draw))
    # Unique indexes, as in a cluster.
    seen: set[int] = set()
    unique = []
    for row in after:
        if row["index"] not in seen:
            seen.add(row["index"])
            unique.append(row)
        else:
            changed.add(row["ids"])  # dropped here: it left after all
    return before, changed, unique


@settings(max_examples=300, deadline=None)
@given(before_and_after())
def test_patched_equals_a_table_built_afresh(
    case: tuple[list[dict[str, Any]], set[str], list[dict[str, Any]]],
) -> None:
    before, changed, after = case
    fresh_rows = [row for row in after if row["ids"] in changed]
    held = table_of(before)
    held.columns.group_codes("zone")  # a per-zone ranking ran: the patch carries the codes
    for criteria in Criteria:  # decisions ran: the patch carries the orders they kept
        rank_victims(held, 5, criteria, 3)
    patched = held.patched(changed, table_of(fresh_rows))
    expected = table_of(after)
    assert patched.lists == expected.lists
    # The ids' array the victims are gathered from: carried while the ids stay, else new.
    carried = patched.columns.derived.get("ids-objects", np.ndarray)
    assert (carried is held.columns.id_objects()) == (patched.lists.ids is held.lists.ids)
    assert patched.columns.id_objects().tolist() == expected.lists.ids
    for name in ("index", "bucket", "created_at", "profile_created_at", "deletion_cost"):
        assert np.array_equal(
            getattr(patched.columns, name), getattr(expected.columns, name), equal_nan=True
        ), name
    assert np.array_equal(patched.columns.protected, expected.columns.protected)
    assert list(patched) == list(expected)
    codes, code_of = patched.columns.group_codes("zone")
    assert [code_of[label] for label in expected.lists.zone] == codes.tolist()
    for criteria in Criteria:
        assert rank_victims(patched, 5, criteria, 3) == rank_victims(expected, 5, criteria, 3)
        quotas = {"AZ1": 2, "AZ2": 2}
        assert rank_victims_by_group(patched, quotas, "zone", criteria, 3) == (
            rank_victims_by_group(expected, quotas, "zone", criteria, 3)
        )


def test_orders_are_carried_across_marks_and_departures() -> None:
    """A mark and a member leaving keep the age orders; a member joining drops them."""
    rows = [
        {**_plain(f"m{i}", i), "created_at": float(10 - i), "profile_created_at": float(i % 3)}
        for i in range(6)
    ]
    held = table_of(rows)
    for criteria in KEPT_CRITERIA:
        rank_victims(held, 2, criteria, 0)
    marked = {**rows[2], "health": "CHECK_FAILED"}
    patched = held.patched({"m2", "m4"}, table_of([marked]))  # m2 marked, m4 left
    after = [marked if row["ids"] == "m2" else row for row in rows if row["ids"] != "m4"]
    for criteria in KEPT_CRITERIA:
        assert f"order-{criteria.value}" in patched.columns.derived.with_prefix("order-")
        assert rank_victims(patched, 5, criteria, 0) == rank_victims(
            table_of(after), 5, criteria, 0
        )
    joined = patched.patched({"m9"}, table_of([_plain("m9", 9)]))
    assert not joined.columns.derived.with_prefix("order-")
    recreated = held.patched({"m1"}, table_of([{**rows[1], "created_at": 99.0}]))
    assert not recreated.columns.derived.with_prefix("order-")


def _plain(node_id: str, index: int) -> dict[str, Any]:
    return {
        "ids": node_id,
        "names": f"n-{node_id}",
        "index": index,
        "status": "ACTIVE",
        "health": "UNKNOWN",
        "created_at": 1.0,
        "profile_created_at": 1.0,
        "zone": "AZ1",
        "region": None,
        "protected": False,
        "deletion_cost": 0.0,
        "tainted": False,
        "physical_id": f"p-{node_id}",
    }


@st.composite
def state_changes(draw: Any) -> tuple[list[dict[str, Any]], list[dict[str, tuple[Any, Any]]]]:
    """Members, then a few rounds of new states (None: that one unchanged) for some."""
    count = draw(st.integers(1, 30))
    rows = [member(f"m{i}", i * 2, draw) for i in range(count)]
    rounds = []
    for _ in range(draw(st.integers(1, 4))):
        changed = draw(st.sets(st.integers(0, count - 1), max_size=count))
        rounds.append(
            {
                f"m{i}": (
                    draw(st.one_of(st.none(), st.sampled_from(STATUSES))),
                    draw(st.one_of(st.none(), st.sampled_from(HEALTH))),
                )
                for i in sorted(changed)
            }
        )
    return rows, rounds


@settings(max_examples=300, deadline=None)
@given(state_changes())
def test_new_states_equal_a_table_built_afresh(
    case: tuple[list[dict[str, Any]], list[dict[str, tuple[Any, Any]]]],
) -> None:
    """with_states, round after round, carries the kept orders and ranks as the table read
    again would."""
    rows, rounds = case
    table = table_of(rows)
    table.columns.group_codes("zone")
    for round_ in rounds:
        for criteria in Criteria:  # the decisions that keep orders and broken lists
            rank_victims(table, 5, criteria, 3)
        kept = table.columns.derived.with_prefix("order-")
        patched = table.with_states(round_)
        assert patched is not None
        for row in rows:
            status, health = round_.get(row["ids"], (None, None))
            row["status"] = row["status"] if status is None else status
            row["health"] = row["health"] if health is None else health
        expected = table_of(rows)
        # Read member by member first: the statuses and healths from their codes (the lists
        # are built only when read whole).
        assert list(patched) == list(expected)
        assert patched.lists == expected.lists
        assert np.array_equal(patched.columns.bucket, expected.columns.bucket)
        assert patched.columns.derived.with_prefix("order-").keys() == kept.keys()
        assert patched.columns.id_objects() is table.columns.id_objects()  # carried
        assert patched.columns.id_objects().tolist() == expected.lists.ids
        # The broken lists and good mask ranked before are left to be updated, not rebuilt:
        # ranking every member (every broken one in order) gives what a fresh table gives.
        if patched is not table:  # (no state differs: the same table)
            before = patched.columns.derived.with_prefix("before-")
            assert before.keys() == {f"before-{k}" for k in table.columns.derived.with_prefix(
                ("broken-", "good"))}  # fmt: skip
        for criteria in KEPT_CRITERIA:
            assert rank_victims(patched, len(rows), criteria, 3) == (
                rank_victims(expected, len(rows), criteria, 3)
            )
        for criteria in Criteria:
            assert rank_victims(patched, 7, criteria, 3) == rank_victims(expected, 7, criteria, 3)
            quotas = {"AZ1": 2, "AZ2": 3}
            assert rank_victims_by_group(patched, quotas, "zone", criteria, 3) == (
                rank_victims_by_group(expected, quotas, "zone", criteria, 3)
            )
        table = patched
    assert table.with_states({"nobody": ("ERROR", None)}) is None
