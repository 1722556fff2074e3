"""docs/metrics.md lists every metric and its labels; the exposition has exactly those.

Both directions: nothing exposed is undocumented, nothing documented is missing. Each family
gets at least one sample first (through the recording methods, a request and store rows), so
its label names show in the exposition.
"""

from __future__ import annotations

import re
from pathlib import Path

from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from tests.functional.api.helpers import make_cluster, make_profile, services

from herd.store import tombstones
from herd.store.models import EngineRow
from herd.types import ResourceType

DOC = Path(__file__).resolve().parents[3] / "docs" / "metrics.md"
ROW = re.compile(r"^\| `(herd_[a-z_]+)` \| (counter|gauge|histogram) \|([^|]*)\|")


def documented() -> dict[str, tuple[str, frozenset[str]]]:
    found = {}
    for line in DOC.read_text().splitlines():
        match = ROW.match(line)
        if match:
            labels = frozenset(re.findall(r"`([a-z_]+)`", match.group(3)))
            found[match.group(1)] = (match.group(2), labels)
    return found


def exposed(text: str) -> dict[str, tuple[str, frozenset[str]]]:
    found = {}
    for family in text_string_to_metric_families(text):
        name = f"{family.name}_total" if family.type == "counter" else family.name
        labels = {key for sample in family.samples for key in sample.labels} - {"le"}
        found[name] = (family.type, frozenset(labels))
        assert family.samples, f"{name} has no sample: the test must give it one"
    return found


def test_every_metric_and_label_is_documented_and_exposed(client: TestClient) -> None:
    herd = services(client)
    metrics = herd.metrics
    metrics.action_finished("CLUSTER_SCALE_IN", "SUCCEEDED", 1.5)
    metrics.action_locked("CLUSTER_SCALE_IN", 0.2)
    metrics.lock_was_busy("cluster")
    metrics.coordinated("claim", 0.002)
    metrics.hook_message("webhook", True)
    metrics.hook_resolved("CONTINUE", 3.0)
    metrics.victims_chosen(["OLDEST_FIRST (zone AZ1)"])
    metrics.health_detected("application")
    metrics.health_recovered("RECREATE", True)
    metrics.engine_running.set(1)
    metrics.engine_heartbeat.set(1.0)
    metrics.engine_in_flight.set(0)
    with herd.database.write() as session:
        tombstones.insert(
            session,
            resource_type=ResourceType.CLUSTER,
            resource_id="x",
            project="p",
            requested_by="u",
            action_id=None,
            now=herd.now() - 10,
        )
        session.add(EngineRow(id="e1", host="h", pid=1, started_at=0.0, heartbeat_at=herd.now()))
    assert client.get("/v1/clusters/nope").status_code == 404
    profile = make_profile(client)
    make_cluster(client, profile)
    assert client.delete(f"/v1/profiles/{profile}").status_code == 409  # still in use
    text = client.get("/metrics").text
    assert 'herd_api_conflicts_total{type="ResourceInUse"} 1.0' in text
    assert client.get("/metrics").headers["content-type"].startswith("text/plain; version=0.0.4")

    docs, expo = documented(), exposed(text)
    assert len(docs) >= 19
    assert sorted(set(expo) - set(docs)) == [], "exposed but not in docs/metrics.md"
    assert sorted(set(docs) - set(expo)) == [], "in docs/metrics.md but not exposed"
    for name, (kind, labels) in docs.items():
        assert expo[name] == (kind, labels), name


def test_labels_are_templates_and_bounded(client: TestClient) -> None:
    client.get("/v1/clusters/some-id-1")
    client.get("/v1/clusters/some-id-2")
    client.get("/no/such/route/abc")
    services(client).metrics.victims_chosen(["RANDOM (region R9, redistributed)"])
    text = client.get("/metrics").text
    assert 'route="/v1/clusters/{cluster_id}"' in text
    assert "some-id" not in text and "abc" not in text
    assert 'route="<unmatched>"' in text
    assert 'criterion="RANDOM"' in text and "R9" not in text
    families = {f.name: f for f in text_string_to_metric_families(text)}
    requests = families["herd_api_requests"]
    counts = {
        (s.labels["route"], s.labels["status"]): s.value
        for s in requests.samples
        if s.name == "herd_api_requests_total" and s.labels["method"] == "GET"
    }
    assert counts[("/v1/clusters/{cluster_id}", "404")] == 2
    # the second request of a series is counted and timed too (its children are cached)
    timed = {
        s.labels["route"]: s.value
        for s in families["herd_api_request_duration_seconds"].samples
        if s.name == "herd_api_request_duration_seconds_count" and s.labels["method"] == "GET"
    }
    assert timed["/v1/clusters/{cluster_id}"] == 2


def test_the_tombstone_gauges_read_the_store(client: TestClient) -> None:
    herd = services(client)
    with herd.database.write() as session:
        for rid, age in (("a", 100.0), ("b", 5.0)):
            tombstones.insert(
                session,
                resource_type=ResourceType.NODE,
                resource_id=rid,
                project="p",
                requested_by="u",
                action_id=None,
                now=herd.now() - age,
            )
        tombstones.mark_error(session, ResourceType.NODE, "b", "failed")
    families = {f.name: f for f in text_string_to_metric_families(client.get("/metrics").text)}
    open_by = {
        (s.labels["resource_type"], s.labels["status"]): s.value
        for s in families["herd_tombstones_open"].samples
    }
    assert open_by == {("node", "DELETING"): 1.0, ("node", "ERROR"): 1.0}
    (oldest,) = families["herd_tombstone_oldest_age_seconds"].samples
    assert oldest.labels == {"resource_type": "node"} and 100.0 <= oldest.value < 200.0
