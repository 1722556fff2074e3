"""Sharing clusters between engines: one health lease per cluster, renewed by its holder.

Every engine refreshes its leases once per heartbeat: it renews the ones it
holds, drops those of clusters that lost their health policy, claims free ones
and takes over the ones of dead engines (dead as ``engine/recovery.py`` decides:
a stale heartbeat, or a process gone on this host) up to its fair share
(``ceil(clusters / live engines)``), and gives back what it holds beyond that
share so that a new engine gets work. Each step is a compare-and-set in the
store, so a cluster never has two holders.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field

from herd.engine.context import EngineContext
from herd.engine.recovery import dead_engines
from herd.store import clusters, engines, events
from herd.store import health_leases as lease_store
from herd.store.health_leases import HealthBinding

log = logging.getLogger(__name__)


@dataclass
class LeaseView:
    """The outcome of one refresh: the clusters this engine checks now, with their bindings."""

    held: dict[str, HealthBinding] = field(default_factory=dict)
    taken_over: dict[str, str] = field(default_factory=dict)  # cluster id -> dead holder
    released: list[str] = field(default_factory=list)


class LeaseKeeper:
    """Claims, renews, takes over and gives back health leases for one engine."""

    def __init__(self, ctx: EngineContext) -> None:
        self.ctx = ctx

    def refresh(self) -> LeaseView:
        ctx = self.ctx
        me = ctx.engine_id
        now = ctx.now()
        view = LeaseView()
        with ctx.database.read() as session:
            # Most engines serve no health policy most of the time: no write for nothing.
            idle = not lease_store.health_bindings(session) and not lease_store.all_leases(session)
        if idle:
            return view
        dead = set(dead_engines(ctx))
        with ctx.database.write() as session:
            registered = engines.ids(session)
            if me not in registered:
                # Our engine row is gone (taken over as dead): we may not hold anything.
                lease_store.release_all(session, me)
                return view
            live = (registered - dead) | {me}
            bindings = {b.cluster_id: b for b in lease_store.health_bindings(session) if b.enabled}
            leases = {row.cluster_id: row.engine_id for row in lease_store.all_leases(session)}
            lease_store.drop_orphans(session, [c for c in leases if c not in bindings])
            held = set(lease_store.renew(session, me, now)) & set(bindings)
            share = math.ceil(len(bindings) / len(live)) if bindings else 0
            for cluster_id in sorted(bindings):
                if len(held) >= share:
                    break
                holder = leases.get(cluster_id)
                if holder == me:
                    continue
                if holder is None:
                    won = lease_store.claim(session, cluster_id, me, now)
                elif holder not in live:
                    won = lease_store.claim(session, cluster_id, me, now, replace=holder)
                    if won:
                        view.taken_over[cluster_id] = holder
                else:
                    continue
                if won:
                    held.add(cluster_id)
            for cluster_id in sorted(held, reverse=True)[: max(0, len(held) - share)]:
                # More than our share: another engine started; let it take some.
                if lease_store.release(session, cluster_id, me):
                    held.discard(cluster_id)
                    view.released.append(cluster_id)
            for cluster_id, old in view.taken_over.items():
                cluster = clusters.get(session, cluster_id)
                if cluster is not None:
                    events.record(
                        session,
                        otype="CLUSTER",
                        oid=cluster.id,
                        oname=cluster.name,
                        project=cluster.project,
                        cluster_id=cluster.id,
                        action="HEALTH_LEASE",
                        status="TAKEN_OVER",
                        reason=(
                            f"Health checks taken over by engine {me[:8]} from engine "
                            f"{old[:8]}, which stopped."
                        ),
                        level="WARNING",
                        now=now,
                    )
            view.held = {c: bindings[c] for c in held}
        if view.taken_over:
            log.warning("health leases taken over: %s", sorted(view.taken_over))
        return view

    def release_all(self) -> None:
        """Give every lease back (the engine stops), so another engine takes over at once."""
        with self.ctx.database.write() as session:
            lease_store.release_all(session, self.ctx.engine_id)
