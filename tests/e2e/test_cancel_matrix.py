"""Cancelling an action of every type while it runs leaves no debris (issue 24).

One ``herd serve`` per database flavour (SQLite, then the suite's PostgreSQL; the
``matrix_server`` fixture, tests/e2e/matrix.py). The round of the crash matrix
(tests/e2e/matrix_round.py: every action type an engine can have in flight, each on its own
cluster or node) starts at once; slow simulated driver calls hold most actions, and the
test-only server holds the others before their work (``HOLD_WHEN = "before"``). Once each
one runs it is cancelled through the API (``PATCH /v1/actions/<id>``, Senlin's cancel). Then:

* every action has ended (CANCELLED, or SUCCEEDED when it finished before the cancel
  landed), and no cluster or node lock is held;
* every node is in a final status (ACTIVE or ERROR: nothing left CREATING, DELETING,
  RECOVERING, UPDATING or OPERATING), and every node row has its resource;
* every cluster's status is the one its members give it (ACTIVE, WARNING or ERROR, never
  RESIZING or CREATING), and a cancelled change of size leaves ``desired_capacity`` equal
  to its members;
* no tombstone says DELETING once its action has ended (a cancelled node or cluster
  delete leaves it ERROR, or gone with its resource);
* the simulated servers are exactly the node rows' (no orphan resource), also after the
  forced node and cluster deletes, which rob a running recovery and scale-out of their locks:
  the servers those make for rows already deleted are destroyed at once, without a restart.

Before, a cancelled scale-in, scale-out or cluster create left the cluster RESIZING or
CREATING with desired capacity and members disagreeing, and only a forced delete removed
a cancelled create.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

import pytest
from tests.e2e.matrix import MatrixServer
from tests.e2e.matrix_round import KINDS, QUICK, Case, Round, start_round
from tests.waiting import FINAL, wait_for, wait_for_action

from herd.types import ActionName

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(600)]

HELD = QUICK  # what the matrix_server fixture holds (tests/e2e/conftest.py)
HOLD_SECONDS = 300.0  # longer than the cancels take to land: each lands in its hold
HOLD_WHEN = "before"
SETTLED = ("ACTIVE", "WARNING", "ERROR")
CANCEL = {"action": {"status": "CANCELLED"}}


def _cancel_when_running(s: MatrixServer, cases: list[Case]) -> dict[str, str]:
    """Cancel each action once it runs (or note that it ended first); kind -> what happened."""
    seen: dict[str, str] = {}
    deadline = time.monotonic() + 120
    while len(seen) < len(cases) and time.monotonic() < deadline:
        statuses = s.statuses()
        for case in cases:
            status = statuses[case.action]
            if case.name in seen:
                continue
            if status in FINAL:
                seen[case.name] = f"ended {status}"
            elif status == "RUNNING":
                r = s.client.patch(f"/v1/actions/{case.action}", json=CANCEL)
                assert r.status_code in (202, 409), r.text
                seen[case.name] = "cancelled" if r.status_code == 202 else "ended first"
        time.sleep(0.05)
    return seen


def _replaced_pairs(case: Case, members: list[dict[str, Any]]) -> int:
    """A cancelled replace_unhealthy keeps each replacement it made with the CHECK_FAILED
    member it replaces (docs/api.md, "Cancelling actions"): the extra members it may leave."""
    if ActionName.CLUSTER_REPLACE_UNHEALTHY not in KINDS[case.name]:
        return 0
    by_index: dict[int, list[dict[str, Any]]] = {}
    for member in members:
        by_index.setdefault(member["index"], []).append(member)
    return sum(
        1
        for pair in by_index.values()
        if len(pair) == 2 and sorted(m["health"] == "CHECK_FAILED" for m in pair) == [False, True]
    )


def _orphan_servers(s: MatrixServer) -> list[str]:
    return [p for p in s.debris(s.all_nodes()) if p.startswith("orphan server")]


def _deleting_with_nothing_running(s: MatrixServer) -> list[str]:
    """Tombstones that say DELETING while their action has ended: a cancelled deletion is
    ERROR (or gone with its resource), never that (docs/api.md, "Cancelling actions")."""
    r = s.client.get("/v1/deletions")
    assert r.status_code == 200, r.text
    statuses = s.statuses()
    return [
        f"{d['resource_type']} {d['resource_id'][:8]}: tombstone DELETING, action ended"
        for d in r.json()["deletions"]
        if d["status"] == "DELETING" and statuses.get(d["action_id"], "SUCCEEDED") in FINAL
    ]


def _verify(s: MatrixServer, cases: list[Case]) -> None:
    c = s.client
    problems: list[str] = []
    # every action ends, those the round's actions left going (a deletion whose purge was
    # cancelled) too, before the clusters are looked at
    wait_for(s.settled, timeout=180)
    for case in cases:
        action = wait_for_action(c, case.action, timeout=180)
        if action["status"] not in ("CANCELLED", "SUCCEEDED"):
            problems.append(f"{case.name}: action {action['status']} {action['status_reason']}")
        r = c.get(f"/v1/clusters/{case.cluster}") if case.cluster else None
        if r is None or r.status_code == 404:  # no cluster, or deleted before the cancel
            continue
        found = r.json()["cluster"]
        members = s.members(str(case.cluster))
        if found["status"] not in SETTLED:
            problems.append(f"{case.name}: cluster {found['status']} {found['status_reason']}")
        if found["desired_capacity"] != len(members) - _replaced_pairs(case, members):
            problems.append(
                f"{case.name}: desired {found['desired_capacity']}, {len(members)} members"
            )
        everyone_active = all(m["status"] == "ACTIVE" for m in members)
        if (found["status"] == "ACTIVE") != everyone_active:
            problems.append(
                f"{case.name}: cluster {found['status']} with members "
                f"{[m['status'] for m in members]}"
            )
    # The servers a robbed scale-out or recovery made for rows a forced delete removed are
    # destroyed by the engine as their calls return, on a thread of its own: with the slow
    # profile's delete_latency that ends after the actions have (docs/deletion.md).
    with contextlib.suppress(AssertionError):
        wait_for(lambda: not _orphan_servers(s), timeout=120)
    nodes = s.all_nodes()
    problems += [
        f"node {n['name']} {n['status']} {n['status_reason']}"
        for n in nodes
        if n["status"] not in ("ACTIVE", "ERROR")
    ]
    problems += s.debris(nodes)
    problems += _deleting_with_nothing_running(s)
    missing = {name for case in cases for name in KINDS[case.name]} - s.action_names()
    problems += [f"no {name} action was made" for name in sorted(missing)]
    told = {c.cluster for c in cases if c.cluster and any(c.name in p for p in problems)}
    problems += [f"  {cluster[:8]}: {line}" for cluster in told for line in s.story(cluster)]
    assert not problems, "\n".join(problems)


def test_cancelling_any_action_leaves_no_debris(matrix_server: MatrixServer) -> None:
    s = matrix_server
    cases = start_round(Round(s, "c"), list(KINDS))
    seen = _cancel_when_running(s, cases)
    print("\nCANCEL MATRIX", seen)
    assert sorted(seen) == sorted(KINDS), seen
    # the held kinds cannot end before their cancel; those on slow driver calls seldom do
    # (a busy machine may make a round start slowly), and each one that does is checked too
    held = [case.name for case in cases if set(KINDS[case.name]) & HELD]
    assert {seen[name] for name in held} == {"cancelled"}, seen
    assert sum(1 for v in seen.values() if v == "cancelled") > len(KINDS) // 2, seen
    _verify(s, cases)
