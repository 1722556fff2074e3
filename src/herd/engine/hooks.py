"""Lifecycle hooks: tell someone a node is about to go, and wait for their answer.

For each victim the engine sends one message (a webhook POST, or a post to a
Zaqar v2 queue) carrying the child action id as ``lifecycle_action_token``. The
child waits in WAITING_LIFECYCLE_COMPLETION until the API completes it, until
``hook_deadline`` passes (measured from when the message was sent; a heartbeat
call moves it), or at once when the message could not be delivered. A late or
undeliverable hook resolves to the hook's ``default_result``: CONTINUE deletes
the node, ABANDON keeps it and fails that child with the reason.
"""

from __future__ import annotations

import contextvars
import uuid
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import quote

import httpx

from herd.engine.context import EngineContext
from herd.engine.execution import ActionExecution
from herd.engine.outbound import OutboundGuard
from herd.errors import OutboundRefused
from herd.json_types import float_value, object_at
from herd.store import actions as action_store
from herd.store import events, hook_deliveries
from herd.store import nodes as node_store
from herd.store.models import NodeRow
from herd.types import ActionStatus, NodeStatus

MESSAGE_TTL = 300
SEND_CONCURRENCY = 8


def hook_message(token: str, node: NodeRow) -> dict[str, object]:
    return {
        "lifecycle_action_token": token,
        "node_id": node.id,
        "resource_id": node.physical_id,
        "cluster_id": node.cluster_id,
        "lifecycle_transition_type": "termination",
    }


class HookWaiter:
    def __init__(self, ctx: EngineContext) -> None:
        self.ctx = ctx

    # -- sending -----------------------------------------------------------------------

    def send_lost(self, ex: ActionExecution, waiting: Sequence[str]) -> None:
        """Send the hook messages of children stored waiting whose message never went out.

        An engine that died between storing them and sending (``NodeOperations.plan_removal``)
        left them without a deadline, so they waited for ever and their parent never ended
        (issue 24's crash matrix); a resumed run sends them now, the deadline counts from then.
        """
        hooks = ex.data.get("hooks")
        if not waiting or not isinstance(hooks, Mapping) or not hooks:
            return
        with self.ctx.database.read() as session:
            rows = action_store.get_many(session, waiting)
            lost = [row.id for row in rows if row.hook_deadline is None]
        if lost:
            self.send_all(ex, lost, hooks)

    def send_all(
        self, ex: ActionExecution, child_ids: list[str], hooks: Mapping[str, object]
    ) -> None:
        hook_type = str(hooks.get("type", "zaqar"))
        params = object_at(hooks, "params")
        timeout = float_value(hooks.get("timeout") or 0)
        with self.ctx.database.read() as session:
            rows = action_store.with_target_nodes(session, child_ids)
        waiting = [
            (child_id, node)
            for child_id, status, node in rows
            if status == ActionStatus.WAITING_LIFECYCLE_COMPLETION
        ]
        if not waiting:
            return

        def send(child_id: str, node: NodeRow) -> None:
            message = hook_message(child_id, node)
            destination, error, attempts = self._deliver(client, hook_type, params, message)
            self._record(ex, child_id, node, hook_type, destination, error, attempts, timeout)

        # Messages go out side by side: one victim's retries against a dead receiver must
        # not hold back the messages (and the waits) of all the others.
        with (
            httpx.Client(
                timeout=self.ctx.settings.webhook_timeout, trust_env=False, follow_redirects=False
            ) as client,
            ThreadPoolExecutor(min(SEND_CONCURRENCY, len(waiting))) as senders,
        ):
            # Each sender runs in a copy of this context, so its log lines keep the action's.
            list(senders.map(lambda item: contextvars.copy_context().run(send, *item), waiting))
        ex.save_data()  # the outputs now say which hooks were sent, for the dashboard

    def _deliver(
        self,
        client: httpx.Client,
        hook_type: str,
        params: Mapping[str, object],
        message: dict[str, object],
    ) -> tuple[str, str | None, int]:
        payload: dict[str, object] = message
        headers: dict[str, str] = {}
        # A webhook URL is the tenant's: it goes through the outbound guard. The Zaqar
        # endpoint is the operator's (only the queue name, checked at create time, is not).
        guard = OutboundGuard.from_settings(self.ctx.settings) if hook_type == "webhook" else None
        if hook_type == "webhook":
            url = str(params.get("url", ""))
        else:
            queue = str(params.get("queue", ""))
            base = (self.ctx.settings.zaqar_url or "").rstrip("/")
            url = f"{base}/v2/queues/{quote(queue, safe='')}/messages"
            payload = {"messages": [{"ttl": MESSAGE_TTL, "body": message}]}
            headers = {"Client-ID": str(uuid.uuid4())}
            if not base:
                return url, "no Zaqar endpoint is configured (zaqar_url)", 0
        error: str | None = None
        attempts = 0
        for attempt in range(max(1, self.ctx.settings.webhook_retries)):
            attempts = attempt + 1
            try:
                if guard is not None:
                    response = guard.request(
                        client, "POST", url, field="hook url", json=payload, headers=headers
                    )
                else:
                    response = client.post(url, json=payload, headers=headers)
                # Only the status code is told (events, outputs), never the answer's body.
                if response.status_code < 300:
                    return url, None, attempts
                error = f"HTTP {response.status_code} from {url}"
                if response.status_code < 500 and response.status_code != 429:
                    break  # the receiver refused the message; retrying will not help
            except OutboundRefused as exc:
                return url, f"refused: {exc.message}", attempts
            except httpx.HTTPError as exc:
                error = f"{type(exc).__name__}: {exc}"
            self.ctx.sleep(min(0.2 * (2**attempt), 2.0))
        return url, error, attempts

    def _record(
        self,
        ex: ActionExecution,
        child_id: str,
        node: NodeRow,
        hook_type: str,
        destination: str,
        error: str | None,
        attempts: int,
        timeout: float,
    ) -> None:
        now = self.ctx.now()
        with self.ctx.database.write() as session:
            hook_deliveries.record(
                session,
                action_id=child_id,
                cluster_id=node.cluster_id or "",
                node_id=node.id,
                hook_type=hook_type,
                destination=destination,
                attempts=attempts,
                error=error,
                now=now,
            )
            child = action_store.get(session, child_id)
            if child is None:
                return
            # An undeliverable message resolves at once; timeout 0 means "do not wait".
            child.hook_deadline = now if error else now + timeout
            if error:
                child.data = {**(child.data or {}), "hook_delivery_error": error}
            events.record(
                session,
                otype="NODE",
                oid=node.id,
                oname=node.name,
                project=node.project,
                user=ex.user,
                cluster_id=node.cluster_id,
                action="LIFECYCLE_HOOK",
                status="FAILED" if error else "SENT",
                reason=(
                    f"Lifecycle hook delivery to {destination} failed after "
                    f"{attempts} attempt(s): {error}"
                    if error
                    else f"Lifecycle hook message sent to {destination}; waiting up to {timeout:g}s"
                ),
                level="WARNING" if error else "INFO",
                now=now,
            )
        self.ctx.metrics.hook_message(hook_type, error is None)
        ex.outputs.setdefault("lifecycle_hooks", {})[node.id] = {
            "node_name": node.name,
            "type": hook_type,
            "destination": destination,
            "attempts": attempts,
            "delivered": error is None,
            "error": error,
            "sent_at": now,
            "result": None,
        }

    # -- waiting -----------------------------------------------------------------------

    def poll(
        self, ex: ActionExecution, waiting: Mapping[str, str]
    ) -> tuple[list[str], dict[str, str]]:
        """Return (children that may proceed, children abandoned with a reason)."""
        default_result = str((ex.data.get("hooks") or {}).get("default_result", "CONTINUE")).upper()
        now = self.ctx.now()
        ready: list[str] = []
        abandoned: dict[str, str] = {}
        resolved: dict[str, tuple[str, float]] = {}  # node id -> (how the wait ended, seconds)
        with self.ctx.database.write() as session:
            rows = action_store.get_many(session, waiting)
            for row in rows:
                result = str((row.data or {}).get("lifecycle_result", "CONTINUE")).upper()
                waited = now - (row.created_at or now)
                if row.status == ActionStatus.READY:
                    resolved[row.target] = (result, waited)
                    if result == "ABANDON":
                        abandoned[row.id] = "Lifecycle hook completed with ABANDON: node kept."
                        continue
                    ready.append(row.id)
                elif row.status == ActionStatus.CANCELLED:
                    resolved[row.target] = ("CANCELLED", waited)
                    abandoned[row.id] = "Lifecycle hook wait cancelled: node kept."
                elif row.hook_deadline is not None and now >= row.hook_deadline:
                    why = (row.data or {}).get("hook_delivery_error")
                    cause = (
                        f"Lifecycle hook not delivered ({why})" if why else "Lifecycle hook timeout"
                    )
                    # An undeliverable message did not time out: say which it was.
                    ended = "UNDELIVERED" if why else "TIMEOUT"
                    resolved[row.target] = (f"{ended}_{default_result}", waited)
                    if default_result == "ABANDON":
                        abandoned[row.id] = f"{cause}; default_result ABANDON: node kept."
                    else:
                        ready.append(row.id)
                        row.data = {
                            **(row.data or {}),
                            "lifecycle_resolution": f"{cause}; CONTINUE",
                        }
            for child_id in ready:
                action_store.set_status(
                    session, child_id, ActionStatus.RUNNING, "Lifecycle complete.", now
                )
                node = node_store.get(session, waiting[child_id])
                if node is not None and any(
                    r.id == child_id and r.action == "NODE_DELETE" for r in rows
                ):
                    node.status, node.status_reason = (
                        NodeStatus.DELETING,
                        "Deletion in progress",
                    )
                    node.updated_at = now
        if resolved:
            self._record_resolutions(ex, resolved)
        return ready, abandoned

    def _record_resolutions(
        self, ex: ActionExecution, resolved: Mapping[str, tuple[str, float]]
    ) -> None:
        """Count the ended waits and keep how each ended in the parent's outputs."""
        sent = ex.outputs.setdefault("lifecycle_hooks", {})
        for node_id, (result, waited) in resolved.items():
            self.ctx.metrics.hook_resolved(result, waited)
            sent.setdefault(node_id, {}).update(result=result, waited=round(waited, 3))
        ex.save_data()
