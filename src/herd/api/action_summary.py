"""herd's ``summary=true`` on the action reads: long lists cut, their full lengths said.

Senlin's action view carries every id an action touched: a creation of 100,000 members has
100,000 children in ``depends_on`` and 100,000 ids in ``outputs.nodes_added`` (7.6 MB). A
dashboard showing the newest actions needs what they did, not every id. With ``summary=true``
every list and object of more than :data:`KEEP` items in the view (``depends_on``,
``depended_by`` and anything inside ``inputs``, ``outputs`` and ``data``) keeps its first
:data:`KEEP`, and ``truncated`` maps the dotted path of each one cut to its full length. The
shape is otherwise Senlin's, so a reader of the full view reads a summary too. Without the
parameter the view is unchanged (docs/api.md).
"""

from __future__ import annotations

from pydantic import JsonValue

from herd.api.view_models import ActionView, JsonObject

#: items kept of a long list or object
KEEP = 20


def cut(value: JsonValue, path: str, truncated: dict[str, int]) -> JsonValue:
    """``value`` with every list or object longer than :data:`KEEP` cut, recorded in ``truncated``.

    Parallel lists (``outputs.shrink.victims`` and ``rules``) stay aligned: each keeps its
    first items.
    """
    if isinstance(value, dict):
        items = list(value.items())
        if len(items) > KEEP:
            truncated[path] = len(items)
            items = items[:KEEP]
        return {key: cut(item, f"{path}.{key}", truncated) for key, item in items}
    if isinstance(value, list):
        if len(value) > KEEP:
            truncated[path] = len(value)
            value = value[:KEEP]
        return [cut(item, f"{path}.{i}", truncated) for i, item in enumerate(value)]
    return value


def _cut_object(value: JsonObject, path: str, truncated: dict[str, int]) -> JsonObject:
    cut_value = cut(value, path, truncated)
    return cut_value if isinstance(cut_value, dict) else {}


def summarise(view: ActionView, counts: dict[str, int]) -> ActionView:
    """The summary of one action view whose dependency lists were read cut already.

    Args:
        view: the action view, ``depends_on`` and ``depended_by`` holding at most
            :data:`KEEP` ids each.
        counts: the full length of each dependency list (``depends_on``, ``depended_by``).
    """
    kept = {"depends_on": len(view["depends_on"]), "depended_by": len(view["depended_by"])}
    truncated = {key: count for key, count in counts.items() if count > kept.get(key, count)}
    # the parts of an action view whose values may hold per-member lists
    view["inputs"] = _cut_object(view["inputs"], "inputs", truncated)
    view["outputs"] = _cut_object(view["outputs"], "outputs", truncated)
    view["data"] = _cut_object(view["data"], "data", truncated)
    view["truncated"] = dict(sorted(truncated.items()))
    return view
