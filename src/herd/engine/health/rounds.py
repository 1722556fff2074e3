"""One health round over a cluster: read, ask, decide, write, and start recoveries.

A round runs when the polling ``interval`` has passed or when a driver reported
a failure. It does nothing while checks are suspended by a shrink or while a
live action holds the cluster lock (it tries again next round, it never fails
or waits on a lock). It checks only settled members that no action is working
on, combines the detection modes' answers, stores every verdict, marks failed
members, and starts one CLUSTER_RECOVER for the failed members whose back-off
allows it (:mod:`herd.engine.health.starter`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from herd.drivers.base import Driver
from herd.engine.context import EngineContext
from herd.engine.health.detection import PollUrlClients, probe_poll_url, probe_status
from herd.engine.health.snapshot import ProfileCache, RoundMember, RoundSnapshot, read_snapshot
from herd.engine.health.starter import RecoveryStarter
from herd.engine.health.state import HeldCluster, PendingEvent
from herd.policies.health_rules import ModeAnswer, Verdict, checkable, combine
from herd.policies.health_settings import DetectionMode
from herd.types import ActionName, DetectionType, RecoveryConditional

PROBE_BATCH = 100  # driver checks per pool task at most


class HealthRound:
    """Runs rounds; one instance per manager, shared by the round threads."""

    def __init__(
        self,
        ctx: EngineContext,
        probes: ThreadPoolExecutor,
        clients: PollUrlClients,
        stop: threading.Event,
        on_recovery: Callable[[], None],
    ) -> None:
        self.ctx = ctx
        self.probes = probes
        self.clients = clients
        self.stop = stop
        self.starter = RecoveryStarter(ctx, on_recovery)
        #: validated properties per profile id, owned here and shared by the rounds (pool
        #: threads) and the scheduler's watch sync: a profile's spec never changes, so an entry
        #: never goes stale; threads meet only in single dict operations (get, set), no lock
        self.profiles: ProfileCache = {}
        self.workers = ctx.settings.health_probe_workers

    def run(self, state: HeldCluster, poll: bool) -> float | None:
        """One round; ``poll`` says whether the polling modes are due.

        Returns when event rounds may run again (None: unchanged).
        """
        pending = state.take_events()
        if not poll and not pending:
            return None
        binding, settings = state.policy()  # one pair for the whole round
        snapshot = read_snapshot(self.ctx, state.cluster_id, binding.binding_id, self.profiles)
        if not snapshot.exists:
            return None
        if snapshot.suspended_by or snapshot.locked_by:
            # A shrink (or another action) owns the cluster: try again next round. Our own
            # recoveries suspend checks too; that is expected and not worth an event.
            own = snapshot.suspended_action == ActionName.CLUSTER_RECOVER
            if snapshot.suspended_by and not own and not state.suspended:
                state.suspended = True
                self.starter.note_suspension(snapshot, suspended=True)
            return None
        if state.suspended:
            state.suspended = False
            self.starter.note_suspension(snapshot, suspended=False)
        ready = set(checkable(m.state() for m in snapshot.members.values()))
        answers: dict[str, list[ModeAnswer]] = {}
        used: dict[str, PendingEvent] = {}
        for node_id, event in pending.items():
            member = snapshot.members.get(node_id)
            if member is None or member.target.physical_id != event.physical_id:
                used[node_id] = event  # the node went, or got a new resource: nothing to do
            elif node_id in ready:
                mode = DetectionType.LIFECYCLE_EVENTS
                answers[node_id] = [ModeAnswer(mode, False, event.reason)]
                used[node_id] = event
        to_poll = sorted(ready) if poll else []
        if not poll and settings.recovery_conditional is RecoveryConditional.ALL_FAILED:
            to_poll = sorted(answers)  # confirm an event with the other modes before acting
        if settings.polling_modes and to_poll:
            polled = self._poll(snapshot, to_poll, settings.polling_modes)
            for node_id, found in polled.items():
                answers.setdefault(node_id, []).extend(found)
        # The verdict's time, not the round's start: probes may take seconds, and the checks
        # and events recorded below say when the answer was known (issue 26).
        now = self.ctx.now()
        verdicts: dict[str, Verdict] = {}
        for node_id, found in answers.items():
            member = snapshot.members[node_id]
            verdicts[node_id] = combine(found, settings, updated_at=member.updated_at, now=now)
        settled = self.starter.settle(settings, snapshot, verdicts, now)
        state.consume({n: e for n, e in used.items() if n not in settled.waiting})
        return settled.earliest

    def _poll(
        self, snapshot: RoundSnapshot, node_ids: list[str], modes: tuple[DetectionMode, ...]
    ) -> dict[str, list[ModeAnswer]]:
        # Poll URLs wait between retries: one node per task so they wait side by side.
        # Driver checks are quick (a sim lookup, a /proc read): batches spare the pool's
        # per-task cost, which is most of a 1,000-member round otherwise.
        slow = any(mode.type is DetectionType.NODE_STATUS_POLL_URL for mode in modes)
        size = 1 if slow else max(1, min(PROBE_BATCH, len(node_ids) // self.workers + 1))
        batches = [node_ids[i : i + size] for i in range(0, len(node_ids), size)]
        futures = [
            self.probes.submit(self._probe_batch, [snapshot.members[n] for n in batch], modes)
            for batch in batches
        ]
        found: dict[str, list[ModeAnswer]] = {}
        for future in futures:
            found.update(future.result())
        return found

    def _probe_batch(
        self, batch: list[RoundMember], modes: tuple[DetectionMode, ...]
    ) -> dict[str, list[ModeAnswer]]:
        return {member.target.node_id: self._probe(member, modes) for member in batch}

    def _probe(self, member: RoundMember, modes: tuple[DetectionMode, ...]) -> list[ModeAnswer]:
        found: list[ModeAnswer] = []
        driver: Driver | None = None
        if member.profile_type is not None:
            driver = self.ctx.drivers.get(member.profile_type)
        for mode in modes:
            if mode.type is DetectionType.NODE_STATUS_POLLING:
                if driver is None:
                    found.append(ModeAnswer(mode.type, False, member.profile_error))
                else:
                    found.append(probe_status(driver, member.target))
            elif mode.type is DetectionType.NODE_STATUS_POLL_URL:
                found.append(probe_poll_url(self.clients, mode, member.target, self.stop))
        return found
