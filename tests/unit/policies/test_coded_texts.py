"""CodedTexts: a text per member as one byte per member."""

from __future__ import annotations

import numpy as np

from herd.policies.coded_texts import CodedTexts


def test_coded_texts_read_as_the_values_and_take_new_ones_at_positions() -> None:
    coded = CodedTexts.of(["ACTIVE", "ERROR", "ACTIVE", "WARNING"])
    assert coded is not None
    assert coded.as_list() == ["ACTIVE", "ERROR", "ACTIVE", "WARNING"] and coded[3] == "WARNING"
    where = np.array([0, 3], dtype=np.int64)
    assert coded.updated(where, ["ACTIVE", None]) is coded  # nothing differs
    changed = coded.updated(where, ["DELETING", "ERROR"])  # a text not seen before
    assert changed is not None
    assert changed.as_list() == ["DELETING", "ERROR", "ACTIVE", "ERROR"]
    assert changed.at(where) == ["DELETING", "ERROR"]
    assert coded.as_list() == ["ACTIVE", "ERROR", "ACTIVE", "WARNING"]  # never changed


def test_more_distinct_texts_than_a_byte_holds_are_refused() -> None:
    assert CodedTexts.of([f"s{i}" for i in range(257)]) is None
    coded = CodedTexts.of([f"s{i}" for i in range(256)])
    assert coded is not None
    assert coded.updated(np.array([0], dtype=np.int64), ["new"]) is None
