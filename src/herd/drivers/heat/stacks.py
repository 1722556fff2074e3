"""Heat stacks for nodes: names, tags, what a node keeps, and waiting for an operation to end.

A stack's ``stack_status`` is ``<ACTION>_<STATE>`` (``CREATE_COMPLETE``,
``UPDATE_FAILED``...). Waiting for an operation watches for its action to reach
COMPLETE or FAILED; a rollback (``disable_rollback: false``) ending is a failure of the
operation, with Heat's reason.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from herd.drivers.base import NodeRequest
from herd.drivers.heat.sdk import HeatConnection, HeatStack
from herd.drivers.nova.cloud import NovaCloud, is_not_found
from herd.drivers.nova.polling import Backoff, poll_until
from herd.errors import DriverError

#: Heat's rule for stack names: a letter first, then letters, digits, ``_``, ``-`` and ``.``
_NAME_BAD = re.compile(r"[^A-Za-z0-9_.-]")
#: seconds between two reads of a stack's status (always the same: stacks take long)
POLL_INTERVAL = 1.0
POLLS = Backoff(POLL_INTERVAL)
#: seconds herd waits beyond a profile's ``timeout``: Heat enforces that timeout itself
#: (``timeout_mins``) and ends the stack ``CREATE_FAILED`` "Create timed out"; herd's own
#: deadline is the backstop for a Heat that does not report in time
HEAT_TIMEOUT_GRACE = 30.0


class StackFailed(DriverError):
    """Heat ended the operation in FAILED (or rolled it back): the message is Heat's reason."""

    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=False)


def stack_name(request: NodeRequest) -> str:
    """The node's name made a valid stack name, with the node id's head (names repeat)."""
    base = _NAME_BAD.sub("-", request.name) or "node"
    if not base[0].isalpha():
        base = f"node-{base}"
    return f"{base[:200]}-{request.node_id[:8]}"


def node_tag(node_id: str) -> str:
    """The tag that finds a node's stack again (Senlin's ``cluster_node_id=<id>``)."""
    return f"cluster_node_id={node_id}"


def stack_tags(request: NodeRequest, owner_tag: str) -> list[str]:
    """Senlin's tags (node, cluster, index) and this herd's owner tag."""
    tags = [owner_tag, node_tag(request.node_id)]
    if request.cluster_id:
        tags += [f"cluster_id={request.cluster_id}", f"cluster_node_index={request.index}"]
    return tags


def stack_arguments(properties: Mapping[str, object]) -> dict[str, object]:
    """The profile's properties as Heat's create/update fields (unset ones left out)."""
    fields: dict[str, object] = {
        "parameters": properties.get("parameters") or {},
        "files": properties.get("files") or {},
        "environment": properties.get("environment") or {},
        "disable_rollback": bool(properties.get("disable_rollback", True)),
    }
    if properties.get("template"):
        fields["template"] = properties["template"]
    else:
        fields["template_url"] = properties["template_url"]
    if properties.get("timeout"):
        fields["timeout_mins"] = properties["timeout"]
    return fields


def operation_timeout(properties: Mapping[str, object], default: float) -> float:
    """How long herd waits for an operation: the profile's ``timeout`` (minutes, which Heat
    enforces too) plus :data:`HEAT_TIMEOUT_GRACE`, else herd's (``HERD_NOVA_TIMEOUT``)."""
    minutes = properties.get("timeout")
    if isinstance(minutes, int) and minutes > 0:
        return float(minutes) * 60 + HEAT_TIMEOUT_GRACE
    return default


def get_stack(cloud: NovaCloud, conn: HeatConnection, stack_id: str) -> HeatStack | None:
    """The stack, or None when Heat no longer has it (404, or deleted)."""
    try:
        stack = cloud.call("reading the stack", conn.orchestration.get_stack, stack_id)
    except Exception as exc:
        if is_not_found(exc):
            return None
        raise
    return None if stack.status == "DELETE_COMPLETE" else stack


def wait_for_action(
    cloud: NovaCloud, conn: HeatConnection, stack_id: str, action: str, timeout: float
) -> HeatStack:
    """Wait until the stack's ``action`` (CREATE, UPDATE) ends; return it COMPLETE.

    Raises:
        StackFailed: it ended FAILED, was rolled back, or disappeared (Heat's reason).
        DriverError: it did not end within ``timeout`` seconds.
    """

    def read() -> HeatStack:
        stack = get_stack(cloud, conn, stack_id)
        if stack is None:
            raise StackFailed(f"stack {stack_id} disappeared while waiting for {action}_COMPLETE")
        return stack

    def ended(stack: HeatStack) -> bool:
        status = stack.status or "unknown"
        if status == f"{action}_COMPLETE":
            return True
        if status in (f"{action}_FAILED", "ROLLBACK_COMPLETE", "ROLLBACK_FAILED"):
            raise StackFailed(f"stack {stack_id} is {status}: {stack.status_reason or 'no reason'}")
        return False

    return poll_until(
        read,
        ended,
        timeout,
        lambda stack: DriverError(
            f"stack {stack_id} timed out: it did not reach {action}_COMPLETE in "
            f"{timeout:.0f} s (it is {stack.status or 'unknown'})"
        ),
        pause=cloud.pause,
        backoff=POLLS,
    )


def delete_and_wait(cloud: NovaCloud, conn: HeatConnection, stack_id: str, timeout: float) -> None:
    """Delete the stack and wait until Heat no longer has it (already gone: success).

    Raises:
        DriverError: Heat refused, the delete ended DELETE_FAILED (Heat's reason), or the
            stack was still there after ``timeout`` seconds.
    """
    try:
        cloud.call("deleting the stack", conn.orchestration.delete_stack, stack_id)
    except Exception as exc:
        if is_not_found(exc):
            return
        raise

    def gone(stack: HeatStack | None) -> bool:
        if stack is not None and stack.status == "DELETE_FAILED":
            raise DriverError(
                f"deleting stack {stack_id} failed: {stack.status_reason or 'no reason'}"
            )
        return stack is None

    poll_until(
        lambda: get_stack(cloud, conn, stack_id),
        gone,
        timeout,
        lambda _: DriverError(f"stack {stack_id} was not deleted in {timeout:.0f} s"),
        pause=cloud.pause,
        backoff=POLLS,
    )


def find_by_tag(cloud: NovaCloud, conn: HeatConnection, tag: str) -> list[HeatStack]:
    """The stacks carrying ``tag`` (deleted ones left out)."""
    stacks = cloud.call("listing stacks", lambda: list(conn.orchestration.stacks(tags=tag)))
    return [s for s in stacks if s.status != "DELETE_COMPLETE"]


def node_data(stack: HeatStack, region: str | None) -> dict[str, object]:
    """What a node keeps about its stack: its details, as Senlin showed a stack's."""
    parameters = {
        key: value
        for key, value in (stack.parameters or {}).items()
        if not key.startswith("OS::")  # Heat's own (stack id, name, project)
    }
    return {
        "placement": {"region_name": region},
        "stack_id": stack.id,
        "stack_name": stack.name,
        "stack_status": stack.status,
        "stack_status_reason": stack.status_reason,
        "outputs": list(stack.outputs or []),
        "parameters": parameters,
        "tags": list(stack.tags or []),
    }
