"""Adopting a Heat stack herd did not make (Senlin API 1.7, Senlin's ``StackProfile.do_adopt``).

The preview reads the stack's template, environment and files as Heat stored them (Heat's
``/template``, ``/environment`` and ``/files``: the raw documents, as a new stack would be
given them) and its parameters (without Heat's own ``OS::*``), timeout and rollback
setting; the overrides replace top-level properties. Claiming tags the stack as the node's
(Senlin's ``cluster_node_id=`` and this herd's owner tag) with a stack update of the same
template, which changes no resource.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from herd.drivers.adoption import AdoptedResource, merge_overrides
from herd.drivers.heat.sdk import HeatConnection
from herd.drivers.heat.stacks import (
    get_stack,
    node_data,
    node_tag,
    operation_timeout,
    stack_arguments,
    wait_for_action,
)
from herd.errors import Conflict, DriverError, InvalidRequest

if TYPE_CHECKING:
    from herd.drivers.heat.driver import HeatStackDriver


def _document(driver: HeatStackDriver, conn: HeatConnection, stack_id: str, part: str) -> Any:
    answer = driver.cloud.call(
        f"reading the stack's {part}", conn.orchestration.get, f"/stacks/{stack_id}/{part}"
    )
    if answer.status_code >= 400:
        raise DriverError(f"reading the stack's {part}: HTTP {answer.status_code}")
    return answer.json()


class HeatAdoptionMixin:
    """``adopt_preview`` and ``claim`` for :class:`HeatStackDriver`."""

    def adopt_preview(
        self, identity: str, overrides: Mapping[str, Any] | None, snapshot: bool
    ) -> AdoptedResource:
        """The profile that would make stack ``identity`` again.

        ``snapshot`` is accepted and, as in Senlin, not acted on.

        Raises:
            InvalidRequest: Heat cannot be asked, or has no such stack.
            Conflict: the stack already backs one of this herd's nodes.
        """
        driver = cast("HeatStackDriver", self)
        try:
            conn = driver.shared_connection("adopting a stack")
            stack = get_stack(driver.cloud, conn, identity)
            if stack is None:
                raise InvalidRequest(
                    f"The specified stack '{identity}' could not be found.", field="identity"
                )
            parts = {
                part: _document(driver, conn, stack.id, part)
                for part in ("template", "environment", "files")
            }
        except DriverError as exc:
            raise InvalidRequest(
                f"Cannot ask Heat about '{identity}': {exc}", field="identity"
            ) from None
        tags = stack.tags or []
        owner = next((t.partition("=")[2] for t in tags if t.startswith("cluster_node_id=")), "")
        if owner and driver.options.owner_tag in tags:
            raise Conflict(f"The stack '{identity}' already backs node '{owner}'.")
        generated: dict[str, Any] = {
            "template": parts["template"],
            "environment": parts["environment"] or {},
            "files": parts["files"] or {},
            "parameters": {
                key: value
                for key, value in (stack.parameters or {}).items()
                if not key.startswith("OS::")
            },
            "timeout": stack.timeout_mins,
            "disable_rollback": bool(stack.is_rollback_disabled),
        }
        properties = driver.validate_properties(merge_overrides(generated, overrides))
        return AdoptedResource(stack.id, properties, node_data(stack, None))

    def claim(self, resource: AdoptedResource, node_id: str) -> None:
        """Tag the stack as node ``node_id``'s, keeping the stack's other tags.

        Raises:
            DriverError: Heat refused the update, or it failed.
        """
        driver = cast("HeatStackDriver", self)
        conn = driver.node_connection(node_id, None)
        stack = get_stack(driver.cloud, conn, resource.physical_id)
        if stack is None:
            raise DriverError(f"stack {resource.physical_id} does not exist", retryable=False)
        kept = [
            t
            for t in stack.tags or []
            if not t.startswith(("cluster_node_id=", "cluster_id=", "cluster_node_index="))
        ]
        tags = [*kept, driver.options.owner_tag, node_tag(node_id)]
        driver.cloud.call_once(
            "tagging the stack",
            conn.orchestration.update_stack,
            resource.physical_id,
            tags=",".join(dict.fromkeys(tags)),
            **stack_arguments(resource.properties),
        )
        timeout = operation_timeout(resource.properties, driver.options.timeout)
        wait_for_action(driver.cloud, conn, resource.physical_id, "UPDATE", timeout)
