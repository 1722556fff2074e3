"""senlin.policy.affinity-1.0 is refused, with the reason, on drivers without server groups."""

from __future__ import annotations

from tests.functional.engine.harness import Harness

from herd.types import ActionName


def test_affinity_attach_is_refused_on_sim_profiles(harness: Harness) -> None:
    cluster = harness.cluster(1)
    policy = harness.policy(
        {"type": "senlin.policy.affinity", "version": "1.0", "properties": {}}, name="aff"
    )
    action = harness.run(
        ActionName.CLUSTER_ATTACH_POLICY, cluster, {"policy_id": policy, "enabled": True}
    )
    assert action.status == "FAILED"
    assert action.status_reason == (
        "Policy not applicable on profile type: herd.sim-1.0 (senlin.policy.affinity places "
        "members in Nova server groups, and only os.nova.server profiles have them)."
    )
