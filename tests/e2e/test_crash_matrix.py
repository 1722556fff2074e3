"""kill -9 of ``herd serve`` with an action of every type in flight; the restart finishes them all.

One ``herd serve`` per database flavour (SQLite, then the suite's PostgreSQL; the
``matrix_server`` fixture, tests/e2e/matrix.py). Each round starts one action of every
kind in ``KINDS`` at once, each on its own cluster or node: together they are every
action type of ``herd.types.ActionName`` that an engine can have in flight
(``test_the_matrix_covers_every_action_type`` fails for a new type without a kind).
Slow simulated driver calls hold most of them; the others finish their work and are held
before their end is written (``tests.e2e.holding_serve``, ``HOLD_WHEN = "after"``), so the
resumed run goes over what the first one did. Once every one of them is in flight the
server is killed with SIGKILL and a plain ``herd serve`` is started on the same data. Then:

* every action ends SUCCEEDED, and nothing is left open (no action READY or RUNNING);
* no cluster or node lock is held;
* every node is in a final state (ACTIVE; ERROR only for the members a purge made
  orphans in the middle of their deletion), every cluster has the desired capacity asked
  for and that many members, and each kind's own result holds (a policy attached, a
  member replaced, a node left);
* the simulated servers are exactly the node rows' (no orphan, no row without its server).

A node delete resumed to "Failed in locking node" for good before (issue 24).
"""

from __future__ import annotations

import time

import pytest
from tests.e2e.matrix import (
    NEVER_IN_FLIGHT,
    PLAIN_SERVE,
    MatrixServer,
    handled_types,
)
from tests.e2e.matrix_round import KINDS, QUICK, Case, Round, start_round
from tests.waiting import FINAL, wait_for, wait_for_action

from herd.types import ActionName

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(600)]

HOLD_SECONDS = 300.0  # longer than any round takes to start: the kill lands in the hold
HOLD_WHEN = "after"
HELD = QUICK  # what the matrix_server fixture holds (tests/e2e/conftest.py)


def test_the_matrix_covers_every_action_type() -> None:
    covered = {name for names in KINDS.values() for name in names}
    assert covered.isdisjoint(NEVER_IN_FLIGHT)
    assert covered | NEVER_IN_FLIGHT.keys() == set(ActionName), "a new action type needs a kind"
    assert not NEVER_IN_FLIGHT.keys() & handled_types(), "an engine runs it: give it a kind"


def _in_flight(s: MatrixServer, cases: list[Case]) -> dict[str, str] | None:
    """Each case's status once every one has started (an operation may have ended)."""
    statuses = s.statuses()
    states = {case.name: statuses[case.action] for case in cases}
    started = all(status in ("RUNNING", *FINAL) for status in states.values())
    return states if started else None


def _kill_and_restart(s: MatrixServer, cases: list[Case]) -> None:
    states = wait_for(lambda: _in_flight(s, cases), timeout=120)
    time.sleep(0.3)  # into the driver calls, which take seconds
    s.herd.kill9()
    ended = [c.name for c in cases if states[c.name] in FINAL and not c.may_end_first]
    assert ended == [], f"ended before the kill: {ended}"
    s.herd.command = PLAIN_SERVE  # the resumed runs are not held again
    s.herd.start(timeout=120)  # a busy machine may take a while to migrate and take over


def _complete_hooks(s: MatrixServer, cases: list[Case]) -> None:
    """The lifecycle hook of the node leaving waits for an answer: CONTINUE, after the restart."""
    (case,) = [c for c in cases if c.name == "node leave"]
    assert case.cluster is not None
    message = wait_for(lambda: s.hooks.messages, timeout=60)[0]
    body = {"complete_lifecycle": {"lifecycle_action_token": message["lifecycle_action_token"]}}
    answer = s.client.post(f"/v1/clusters/{case.cluster}/actions", json=body)
    assert answer.status_code == 202, answer.text


def _verify(s: MatrixServer, cases: list[Case]) -> None:
    c = s.client
    problems: list[str] = []
    # every action ends, those the round's actions left going (a deletion whose purge was
    # cancelled) too, before the clusters are looked at
    wait_for(s.settled, timeout=180)
    for case in cases:
        action = wait_for_action(c, case.action, timeout=180)
        if action["status"] != "SUCCEEDED":
            problems.append(f"{case.name}: {action['status']} {action['status_reason']}")
    for case in cases:
        if case.cluster is not None and case.desired is None:
            if c.get(f"/v1/clusters/{case.cluster}").status_code != 404:
                problems.append(f"{case.name}: the cluster is still there")
        elif case.cluster is not None:
            cluster = c.get(f"/v1/clusters/{case.cluster}").json()["cluster"]
            members = s.members(case.cluster)
            if (cluster["desired_capacity"], len(members)) != (case.desired, case.desired):
                problems.append(
                    f"{case.name}: desired {cluster['desired_capacity']} with {len(members)} "
                    f"members, {case.desired} asked for"
                )
        if case.check is not None:
            try:
                case.check(s)
            except AssertionError as failed:
                problems.append(f"{case.name}: {failed}")
    allowed = {node for case in cases for node in case.errors_allowed}
    nodes = s.all_nodes()
    problems += [
        f"node {n['name']} {n['status']} {n['status_reason']}"
        for n in nodes
        if n["status"] != "ACTIVE" and not (n["id"] in allowed and n["status"] == "ERROR")
    ]
    problems += s.debris(nodes)
    missing = {name for case in cases for name in KINDS[case.name]} - s.action_names()
    problems += [f"no {name} action was made" for name in sorted(missing)]
    assert not problems, "\n".join(problems)


def test_every_action_survives_a_kill_9(matrix_server: MatrixServer) -> None:
    s = matrix_server
    cases = start_round(Round(s, "a"))
    _kill_and_restart(s, cases)
    _complete_hooks(s, cases)
    _verify(s, cases)
