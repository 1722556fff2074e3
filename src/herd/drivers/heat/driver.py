"""The ``os.heat.stack`` driver: a node is a Heat stack, made through openstacksdk.

Create is a stack create from the profile's template (the stack named after the node,
tagged as Senlin tagged it plus this herd's owner tag), then a wait for CREATE_COMPLETE;
a stack that fails (or is rolled back) is deleted and the node fails with Heat's reason,
so nothing half made is left. Delete waits until Heat no longer has the stack (a 404 is
success). A new profile updates the stack in place (PUT, then UPDATE_COMPLETE). Check
reads the stack's status. The node's details are the stack's status, outputs, parameters
and tags, stored after create and update and read again from Heat when one node is shown
(``current_details``). Adopting a stack is :mod:`herd.drivers.heat.adopt`.

The cloud is the Nova driver's (:class:`herd.drivers.nova.cloud.NovaCloud`, its limits and
retries) with its own clouds.yaml entry, ``HERD_HEAT_CLOUD`` (default: Nova's); with
Keystone trusts (``nova_trusts``) each node acts through its owner's trust, which is
checked with Keystone before each stack create (Heat caches token validations).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, ClassVar, cast

from herd.drivers.base import (
    CreatedResource,
    HealthReport,
    NodeRequest,
    ResourceGone,
    ResourceRef,
)
from herd.drivers.heat.adopt import HeatAdoptionMixin
from herd.drivers.heat.sdk import HeatConnection
from herd.drivers.heat.spec import PROPERTIES_SCHEMA, validate_stack_properties
from herd.drivers.heat.stacks import (
    delete_and_wait,
    find_by_tag,
    get_stack,
    node_data,
    node_tag,
    operation_timeout,
    stack_arguments,
    stack_name,
    stack_tags,
    wait_for_action,
)
from herd.drivers.nova.cloud import is_not_found, nova_message
from herd.drivers.nova.cloud_driver import CloudDriver
from herd.drivers.spec_values import fail
from herd.errors import DriverError, InvalidSpec

log = logging.getLogger(__name__)

#: the service type of Heat in a Keystone catalog
ORCHESTRATION = "orchestration"


def _region(properties: Mapping[str, Any]) -> str | None:
    region = (properties.get("context") or {}).get("region_name")
    return str(region) if region else None


class HeatStackDriver(HeatAdoptionMixin, CloudDriver):
    """Heat stacks on the configured cloud."""

    profile_type = "os.heat.stack"
    versions = ("1.0",)
    support_status: ClassVar[dict[str, list[dict[str, str]]]] = {
        "1.0": [{"status": "SUPPORTED", "since": "2016.04"}],
    }
    properties_schema: ClassVar[dict[str, dict[str, Any]]] = PROPERTIES_SCHEMA
    supports_update = True

    @classmethod
    def validate_properties(cls, properties: Mapping[str, Any]) -> dict[str, Any]:
        """Senlin's spec, checked without Heat (see :mod:`herd.drivers.heat.spec`)."""
        return validate_stack_properties(properties)

    def check_against_backend(self, properties: Mapping[str, Any]) -> None:
        """At profile create/validate: Heat previews a stack of the template (as Senlin's
        profile validate did), and its refusal is a 400 naming ``properties.template``.

        Nothing is asked when no cloud is configured, when the cloud's catalog has no
        ``orchestration`` service, or with trusts (nothing acts for a profile): the spec
        is then checked when a node creates its stack, as Senlin's profile create did.
        """
        if self.trusts is not None or not self.cloud.configured:
            return
        region = _region(properties)
        try:
            conn = self._connection(None, region)
            if not self.cloud.call("reading the catalog", conn.has_service, ORCHESTRATION):
                return
        except DriverError as exc:
            raise InvalidSpec(
                f"properties: cannot check the template against Heat: {exc}", field="properties"
            ) from None
        field = "template" if properties.get("template") else "template_url"
        try:
            self.cloud.call_once(
                "previewing the stack",
                conn.orchestration.create_stack,
                preview=True,
                name="herd-validate",
                **stack_arguments(properties),
            )
        except DriverError as exc:
            if exc.retryable:  # Heat did not answer: not the template's fault
                raise InvalidSpec(
                    f"properties: cannot check the template against Heat: {exc}",
                    field="properties",
                ) from None
            raise fail(field, f"Failed in validating template: {_heat_reason(exc)}") from None

    def _connection(self, node_id: str | None, region: str | None) -> HeatConnection:
        """The node owner's trust, or the configured cloud (a real openstacksdk Connection,
        which the Nova-typed connection getters return: it is also a Heat client)."""
        if self.trusts is not None and node_id is not None:
            return cast(HeatConnection, self.trusts.connection(node_id, region))
        return cast(HeatConnection, self.cloud.connection(region))

    def node_connection(self, node_id: str | None, region: str | None) -> HeatConnection:
        """The connection acting for a node (None: none); refused without Heat in the catalog."""
        conn = self._connection(node_id, region)
        if not self.cloud.call("reading the catalog", conn.has_service, ORCHESTRATION):
            raise DriverError(
                "the cloud's catalog has no orchestration (Heat) service: os.heat.stack "
                "nodes need one",
                retryable=False,
            )
        return conn

    def shared_connection(self, doing: str) -> HeatConnection:
        """The configured cloud, for calls that act for no node; refused with trusts."""
        self.refuse_with_trusts(doing)
        return self.node_connection(None, None)

    # -- create / delete -----------------------------------------------------------------

    def create(self, request: NodeRequest) -> CreatedResource:
        """Create the node's stack and wait for CREATE_COMPLETE (or resume the one made before).

        Raises:
            DriverError: Heat refused the stack, or it failed (Heat's reason; the stack has
                been deleted), or it was not complete in time.
        """
        region = _region(request.properties)
        conn = self.node_connection(request.node_id, region)
        if self.trusts is not None:  # Heat may accept a cached token of a dead trust
            try:
                self.trusts.recheck(request.node_id, region)
            except DriverError:
                raise
            except Exception as exc:  # keystoneauth's own: Keystone did not answer
                raise DriverError(
                    f"Keystone could not be asked for a token through the trust: "
                    f"{nova_message(exc)}",
                    retryable=True,
                ) from None
        timeout = operation_timeout(request.properties, self.options.timeout)
        found = find_by_tag(self.cloud, conn, node_tag(request.node_id))
        for extra in found[1:]:  # never more than one stack per node
            delete_and_wait(self.cloud, conn, extra.id, timeout)
        if found:
            log.info("node %s: resuming with its stack %s", request.node_id, found[0].id)
            stack_id = found[0].id
        else:
            try:
                made = self.cloud.call_once(
                    "creating the stack",
                    conn.orchestration.create_stack,
                    name=stack_name(request),
                    tags=",".join(stack_tags(request, self.options.owner_tag)),
                    **stack_arguments(request.properties),
                )
            except DriverError as exc:
                raise DriverError(
                    f"Heat refused the stack: {_heat_reason(exc)}", retryable=exc.retryable
                ) from None
            stack_id = made.id
        return self._settle(conn, stack_id, "CREATE", timeout, region)

    def _settle(
        self, conn: HeatConnection, stack_id: str, action: str, timeout: float, region: str | None
    ) -> CreatedResource:
        """Wait for ``action`` to complete; a create that failed leaves no stack behind."""
        try:
            stack = wait_for_action(self.cloud, conn, stack_id, action, timeout)
        except DriverError as exc:
            if action != "CREATE":
                raise
            try:
                delete_and_wait(self.cloud, conn, stack_id, timeout)
            except DriverError as cleanup:
                raise DriverError(
                    f"{exc}; deleting stack {stack_id} failed too: {cleanup}"
                ) from None
            raise DriverError(f"{exc} (stack {stack_id} was deleted)", retryable=False) from None
        return CreatedResource(stack.id, node_data(stack, region))

    def delete(self, ref: ResourceRef) -> None:
        """Delete the stack and wait until Heat no longer has it (a 404 is success)."""
        if not ref.physical_id:
            return
        conn = self.node_connection(ref.node_id, _region(ref.properties))
        timeout = operation_timeout(ref.properties, self.options.timeout)
        delete_and_wait(self.cloud, conn, ref.physical_id, timeout)

    # -- update / check --------------------------------------------------------------------

    def update(self, ref: ResourceRef, request: NodeRequest) -> CreatedResource:
        """The new profile's template, parameters, files, environment, timeout and
        rollback setting on the same stack (Heat's stack update), then UPDATE_COMPLETE.

        Raises:
            DriverError: the node has no stack, Heat refused the update, or the update
                failed (Heat's reason; the stack stays, as Heat left it).
        """
        if not ref.physical_id:
            raise DriverError(f"node {ref.node_id} has no stack", retryable=False)
        region = _region(request.properties)
        conn = self.node_connection(ref.node_id, region)
        current = get_stack(self.cloud, conn, ref.physical_id)
        if current is None:
            raise DriverError(f"stack {ref.physical_id} does not exist", retryable=False)
        try:
            self.cloud.call_once(
                "updating the stack",
                conn.orchestration.update_stack,
                ref.physical_id,
                tags=",".join(current.tags or []),
                **stack_arguments(request.properties),
            )
        except DriverError as exc:
            raise DriverError(
                f"Heat refused the stack update: {_heat_reason(exc)}", retryable=exc.retryable
            ) from None
        timeout = operation_timeout(request.properties, self.options.timeout)
        return self._settle(conn, ref.physical_id, "UPDATE", timeout, region)

    def check(self, ref: ResourceRef) -> HealthReport:
        """Healthy unless the stack is gone or its last operation FAILED.

        When Heat cannot be asked the node counts as healthy, as Nova's do: an API blip
        must not make herd replace every stack.
        """
        if not ref.physical_id:
            return HealthReport(False, "node has no stack")
        try:
            conn = self.node_connection(ref.node_id, _region(ref.properties))
            stack = get_stack(self.cloud, conn, ref.physical_id)
        except DriverError as exc:
            log.warning("node %s: cannot ask Heat, counted healthy: %s", ref.node_id, exc)
            return HealthReport(True, f"Heat could not be asked: {exc}")
        if stack is None:
            return HealthReport(False, f"stack {ref.physical_id} does not exist")
        status = stack.status or ""
        if status.endswith("_FAILED"):
            return HealthReport(
                False, f"stack {ref.physical_id} is {status}: {stack.status_reason or ''}"
            )
        return HealthReport(True)

    def current_details(self, ref: ResourceRef) -> dict[str, Any] | None:
        """The stack as Heat has it now (status, outputs, parameters, tags), as Senlin's
        ``do_get_details`` read it on every show: someone may have updated it in Heat.

        One read, no retries (the API bounds the wait too).

        Raises:
            ResourceGone: Heat no longer has the stack.
            DriverError: Heat could not be asked.
        """
        if not ref.physical_id:
            return None
        region = _region(ref.properties)
        conn = self.node_connection(ref.node_id, region)
        try:
            stack = self.cloud.call_once(
                "reading the stack", conn.orchestration.get_stack, ref.physical_id
            )
        except Exception as exc:
            if is_not_found(exc):
                stack = None
            else:
                raise
        if stack is None or stack.status == "DELETE_COMPLETE":
            raise ResourceGone(f"stack {ref.physical_id} does not exist in Heat")
        return node_data(stack, region)

    # -- restart ---------------------------------------------------------------------------

    def discover(self) -> dict[str, CreatedResource]:
        """This herd's stacks (its owner tag) in the default region, by node id."""
        if not self.cloud.configured or self.trusts is not None:
            return {}
        try:
            conn = self._connection(None, None)
            if not self.cloud.call("reading the catalog", conn.has_service, ORCHESTRATION):
                return {}
            stacks = find_by_tag(self.cloud, conn, self.options.owner_tag)
        except Exception as exc:  # the engine starts even when the cloud is away
            raise DriverError(
                f"cannot list the stacks of {self.options.owner_tag}: {exc}"
            ) from None
        found: dict[str, CreatedResource] = {}
        for stack in stacks:
            for tag in stack.tags or []:
                if tag.startswith("cluster_node_id="):
                    node_id = tag.partition("=")[2]
                    found[node_id] = CreatedResource(stack.id, node_data(stack, None))
        return found

    def close(self) -> None:
        self.cloud.close()  # the trusts' connections are the Nova driver's to close
        super().close()


def _heat_reason(exc: BaseException) -> str:
    """Heat's message without the "what herd was doing" prefix NovaCloud adds."""
    text = str(exc)
    return text.partition(": ")[2] or text if ": " in text else nova_message(exc)
