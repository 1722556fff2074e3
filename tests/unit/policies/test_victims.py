"""Victims: two lists (ids, rules) that read as a sequence of Victim."""

from __future__ import annotations

import numpy as np
import pytest

from herd.policies.victims import Victim, Victims


def test_victims_read_as_pairs_and_hand_out_copies() -> None:
    victims = Victims(["a", "b", "c"], ["status ERROR", "OLDEST_FIRST", "OLDEST_FIRST"])
    assert list(victims) == [
        Victim("a", "status ERROR"),
        Victim("b", "OLDEST_FIRST"),
        Victim("c", "OLDEST_FIRST"),
    ]
    assert victims[1] == Victim("b", "OLDEST_FIRST") and victims[-1].node_id == "c"
    assert victims[:2] == Victims(["a", "b"], ["status ERROR", "OLDEST_FIRST"])
    ids = victims.node_ids
    ids.append("x")  # a copy: the victims stay as decided
    assert victims.node_ids == ["a", "b", "c"] and len(victims) == 3
    assert victims != Victims(["a", "b", "c"], ["status ERROR"] * 3)


def test_victims_built_from_one_rule_from_pairs_and_from_parts() -> None:
    explicit = Victims.by_one_rule(["n1", "n2"], "explicit candidate")
    assert explicit.rules == ["explicit candidate"] * 2
    assert Victims.of(explicit) == explicit
    joined = Victims.joined([explicit, Victims(["n3"], ["tainted"])])
    assert joined.node_ids == ["n1", "n2", "n3"] and joined[2].rule == "tainted"
    assert Victims() == [] and not Victims()


def test_victims_refuse_lists_of_different_lengths() -> None:
    with pytest.raises(ValueError, match="2 victims but 1 rules"):
        Victims(["a", "b"], ["OLDEST_FIRST"])


def test_victims_at_positions_read_as_the_lists_they_stand_for() -> None:
    ids = ["a", "b", "c", "d"]
    texts = ["status ERROR", "OLDEST_FIRST"]
    victims = Victims.at_positions(ids, np.array([2, 0, 3]), texts, np.array([0, 1, 1], np.int8))
    assert len(victims) == 3
    assert victims == Victims(["c", "a", "d"], ["status ERROR", "OLDEST_FIRST", "OLDEST_FIRST"])
    assert victims.node_ids == ["c", "a", "d"] and victims[1] == Victim("a", "OLDEST_FIRST")
    other = Victims.at_positions(ids, np.array([1]), ["YOUNGEST_FIRST"], np.array([0]))
    joined = Victims.joined([victims, other])
    assert joined._held is not None  # the same ids: still positions
    assert joined.rules == [*victims.rules, "YOUNGEST_FIRST"] and joined.node_ids[-1] == "b"
    elsewhere = Victims.at_positions(["x"], np.array([0]), ["tainted"], np.array([0]))
    mixed = Victims.joined([victims, elsewhere, Victims(["y"], ["explicit candidate"])])
    assert mixed.node_ids == ["c", "a", "d", "x", "y"]
    assert mixed.rules[-2:] == ["tainted", "explicit candidate"]
    with pytest.raises(ValueError, match="2 victims but 1 rules"):
        Victims.at_positions(ids, np.array([0, 1]), texts, np.array([0]))


def test_victims_at_positions_in_an_array_of_ids_gather_each_list_alone() -> None:
    ids = np.empty(4, dtype=object)
    ids[:] = ["a", "b", "c", "d"]
    victims = Victims.at_positions(ids, np.array([3, 1]), ["tainted", "OLDEST_FIRST"],
                                   np.array([1, 0], np.int8))  # fmt: skip
    assert victims.node_ids == ["d", "b"] and victims._rule_list is None  # rules not read
    assert victims.rules == ["OLDEST_FIRST", "tainted"]
    assert victims == Victims(["d", "b"], ["OLDEST_FIRST", "tainted"])
