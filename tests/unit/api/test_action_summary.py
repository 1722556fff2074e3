"""The cut of ``summary=true`` (herd.api.action_summary): what is kept, and the paths named."""

from __future__ import annotations

from typing import Any, cast

from herd.api.action_summary import KEEP, cut, summarise
from herd.api.view_models import ActionView, JsonObject


def test_long_lists_and_objects_keep_their_first_items_at_any_depth() -> None:
    truncated: dict[str, int] = {}
    value: JsonObject = {
        "candidates": list(range(KEEP + 5)),
        "short": list(range(KEEP)),
        "hooks": {f"n{i:02d}": {"ids": list(range(KEEP + 1))} for i in range(KEEP + 2)},
        "batches": [list(range(KEEP + 3)), [1]],
        "count": 3,
    }
    out: Any = cut(value, "inputs", truncated)  # a JSON value; the test reads into it
    assert out["candidates"] == list(range(KEEP))
    assert out["short"] == list(range(KEEP))
    assert list(out["hooks"]) == [f"n{i:02d}" for i in range(KEEP)]
    assert out["hooks"]["n00"]["ids"] == list(range(KEEP))
    assert out["batches"] == [list(range(KEEP)), [1]]
    assert out["count"] == 3
    assert truncated == {
        "inputs.candidates": KEEP + 5,
        "inputs.hooks": KEEP + 2,
        **{f"inputs.hooks.n{i:02d}.ids": KEEP + 1 for i in range(KEEP)},
        "inputs.batches.0": KEEP + 3,
    }


def test_a_summary_names_the_dependencies_cut_by_their_full_count() -> None:
    # the keys the summary reads; the rest of an action view does not matter here
    view = cast(
        ActionView,
        {
            "depends_on": ["a"] * KEEP,
            "depended_by": ["b"],
            "inputs": {},
            "outputs": {"nodes_added": ["x"] * (KEEP * 2)},
            "data": {"deletion": {"count": 2}},
        },
    )
    out = summarise(view, {"depends_on": 500, "depended_by": 1})
    assert out["truncated"] == {"depends_on": 500, "outputs.nodes_added": KEEP * 2}
    assert out["outputs"]["nodes_added"] == ["x"] * KEEP
    assert out["data"] == {"deletion": {"count": 2}} and out["depended_by"] == ["b"]
