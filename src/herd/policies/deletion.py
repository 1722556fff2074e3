"""``senlin.policy.deletion-1.0`` / ``-1.1``: which members a shrink removes, and how.

The precedence follows Senlin's ``pre_op`` (research notes 1.3): explicit
candidates, then the node of a NODE_DELETE, then an earlier policy's
``data['deletion']`` (regions, then zones, then its count), then the scale-in
count (default 1), then the parsed resize. Differences from Senlin, on purpose:

* ``data['hooks']`` is recorded for CLUSTER_DEL_NODES and NODE_DELETE too, so a
  lifecycle hook applies to every deletion the policy sees (Senlin skipped it
  on those paths although its docs promised it).
* Hooks are checked at create time (a zaqar hook needs a queue, a webhook an
  http(s) url), ``grace_period`` and ``hooks.timeout`` must be >= 0, and hooks
  take a ``default_result`` (CONTINUE or ABANDON) applied on timeout.
* Victims come from :mod:`herd.policies.ranking` (protection, deletion cost,
  unhealthy members first, deterministic ties); per-zone or per-region counts
  larger than a group are clamped and redistributed instead of crashing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import ClassVar
from urllib.parse import urlparse

from herd.domain.sizing import parse_resize
from herd.domain.values import MAX_DURATION
from herd.errors import InvalidSpec
from herd.json_types import int_value, list_at, object_at, str_at
from herd.policies.base import Decision, Policy, PolicyContext
from herd.policies.ranking import group_counts, rank_victims, rank_victims_by_group
from herd.policies.spec import Boolean, Field, Integer, Map, String
from herd.policies.victims import RankResult, Victims
from herd.types import ActionName, Criteria, Phase

CANDIDATES_GENERATED = "Candidates generated"
HOOK_TYPES = ("zaqar", "webhook")
QUEUE_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")  # Zaqar's own rule for queue names
HOOK_RESULTS = ("CONTINUE", "ABANDON")

PROPERTIES_SCHEMA: dict[str, Field] = {
    "criteria": String(default=Criteria.RANDOM.value, allowed=tuple(c.value for c in Criteria)),
    "destroy_after_deletion": Boolean(default=True),
    "grace_period": Integer(default=0, min_value=0, max_value=MAX_DURATION),
    "reduce_desired_capacity": Boolean(default=True),
    "hooks": Map(
        schema={
            "type": String(default="zaqar", allowed=HOOK_TYPES),
            "params": Map(schema={"queue": String(default=""), "url": String(default="")}),
            "timeout": Integer(default=0, min_value=0, max_value=MAX_DURATION),
            "default_result": String(default="CONTINUE", allowed=HOOK_RESULTS),
        }
    ),
}


def _check_hooks(hooks: Mapping[str, object]) -> None:
    params = object_at(hooks, "params")
    queue, url_text = str_at(params, "queue"), str_at(params, "url")
    if hooks["type"] == "zaqar" and not queue.strip():
        raise InvalidSpec(
            "A 'zaqar' lifecycle hook needs a non-empty 'params.queue'.",
            field="properties.hooks.params.queue",
        )
    if hooks["type"] == "zaqar" and not QUEUE_NAME.fullmatch(queue.strip()):
        # The name goes into the queue's URL path: no '/', '?', '..' or other surprises.
        raise InvalidSpec(
            f"A Zaqar queue name has 1 to 64 letters, digits, '_' or '-', got '{params['queue']}'.",
            field="properties.hooks.params.queue",
        )
    if hooks["type"] == "webhook":
        url = urlparse(url_text.strip())
        if url.scheme not in ("http", "https") or not url.netloc:
            raise InvalidSpec(
                f"A 'webhook' lifecycle hook needs an http(s) 'params.url', got '{params['url']}'.",
                field="properties.hooks.params.url",
            )


class DeletionPolicy(Policy):
    """Chooses the victims of a shrink and how they are removed."""

    type_name = "senlin.policy.deletion"
    versions = ("1.0", "1.1")
    schema: ClassVar[dict[str, Field]] = PROPERTIES_SCHEMA
    support_status: ClassVar[dict[str, list[dict[str, str]]]] = {
        "1.0": [{"status": "SUPPORTED", "since": "2016.04"}],
        "1.1": [{"status": "SUPPORTED", "since": "2018.01"}],
    }
    priority = 400
    singleton = True
    targets = frozenset(
        (Phase.BEFORE, action)
        for action in (
            ActionName.CLUSTER_SCALE_IN,
            ActionName.CLUSTER_DEL_NODES,
            ActionName.CLUSTER_RESIZE,
            ActionName.NODE_DELETE,
        )
    )

    @classmethod
    def check_properties(
        cls, result: dict[str, object], properties: Mapping[str, object]
    ) -> dict[str, object]:
        # A spec without hooks (or with an empty map) configures none.
        if properties.get("hooks"):
            _check_hooks(object_at(result, "hooks"))
        else:
            result["hooks"] = {}
        return result

    @property
    def criteria(self) -> Criteria:
        return Criteria(str_at(self.properties, "criteria"))

    def outbound_urls(self) -> list[tuple[str, str]]:
        hooks = self.hooks
        if hooks and hooks["type"] == "webhook":
            url = str_at(object_at(hooks, "params"), "url")
            return [("properties.hooks.params.url", url.strip())]
        return []

    @property
    def hooks(self) -> dict[str, object]:
        return dict(object_at(self.properties, "hooks"))

    def before(self, ctx: PolicyContext) -> Decision:
        decision, _ = self.decide(ctx)
        return decision

    def decide(self, ctx: PolicyContext) -> tuple[Decision, Victims]:
        """The BEFORE decision plus the victims with the rule that chose each.

        The preview uses the victims; ``before`` keeps only the decision.
        """
        data = dict(ctx.data)
        candidates = ctx.inputs.get("candidates")
        if candidates:
            named = map(str, list_at(ctx.inputs, "candidates"))
            explicit = Victims.by_one_rule(named, "explicit candidate")
            return self._chosen(data, explicit)
        if ctx.action is ActionName.NODE_DELETE:
            if ctx.target_node_id is None:
                return Decision.error(data, "NODE_DELETE has no target node."), Victims()
            direct = Victims.by_one_rule([ctx.target_node_id], "node deleted directly")
            return self._chosen(data, direct)
        nodes = ctx.cluster.nodes
        prior = object_at(data, "deletion")
        if prior:
            count = int_value(prior.get("count", 1))
            regions, zones = group_counts(prior.get("regions")), group_counts(prior.get("zones"))
        elif ctx.action is ActionName.CLUSTER_SCALE_IN:
            raw = ctx.inputs.get("count", 1)
            try:
                count = int_value(raw)
            except (TypeError, ValueError):
                return Decision.error(data, f"Invalid count ({raw}) for scaling in."), Victims()
            regions = zones = None
        elif ctx.action is ActionName.CLUSTER_RESIZE:
            plan = parse_resize(len(nodes), ctx.cluster, ctx.inputs, ctx.max_nodes_per_cluster)
            if plan.error:
                return Decision.error(data, plan.error), Victims()
            data.update(plan.to_data())
            if not plan.is_shrink:
                return Decision.ok(data, "No node to delete."), Victims()
            count, regions, zones = plan.deletion_count, None, None
        else:
            return Decision.skip(data), Victims()
        result = self._rank(ctx, count, regions, zones)
        if result.error:
            return Decision.error(data, result.error), result.victims
        return self._chosen(data, result.victims)

    def _rank(
        self,
        ctx: PolicyContext,
        count: int,
        regions: Mapping[str, int] | None,
        zones: Mapping[str, int] | None,
    ) -> RankResult:
        nodes = ctx.cluster.nodes
        if regions:
            return rank_victims_by_group(nodes, regions, "region", self.criteria, ctx.seed)
        if zones:
            return rank_victims_by_group(nodes, zones, "zone", self.criteria, ctx.seed)
        return rank_victims(nodes, min(count, len(nodes)), self.criteria, ctx.seed)

    def _chosen(self, data: dict[str, object], victims: Victims) -> tuple[Decision, Victims]:
        # Keep keys an earlier policy wrote (zones, regions); overwrite the rest.
        deletion = dict(object_at(data, "deletion"))
        deletion.update(
            count=len(victims),
            candidates=victims.node_ids,
            destroy_after_deletion=self.properties["destroy_after_deletion"],
            grace_period=self.properties["grace_period"],
            reduce_desired_capacity=self.properties["reduce_desired_capacity"],
        )
        data["deletion"] = deletion
        if self.hooks:
            data["hooks"] = self.hooks | {"params": dict(object_at(self.hooks, "params"))}
        # Why each was chosen, in order: shown by the preview and kept with the action's
        # outputs, but not in data['deletion'], whose keys the spec fixes.
        notes = {"rules": victims.rules}
        return Decision.ok(data, CANDIDATES_GENERATED, notes=notes), victims
