"""Senlin's server operations and adoption of existing servers, for ``os.nova.server``.

Each operation is one Nova server action followed by a wait for the status it
leads to (``stop`` -> SHUTOFF, ``pause`` -> PAUSED...); ``migrate`` (a cold
migration) is confirmed once Nova reaches VERIFY_RESIZE, so the server ends
ACTIVE on its new host. Adoption describes a server as the profile that would
make it again (Senlin's ``do_adopt``) and tags it as this herd's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from herd.drivers.adoption import AdoptedResource, merge_overrides
from herd.drivers.base import CreatedResource, NodeRequest, ResourceRef
from herd.drivers.nova.cloud import node_tag
from herd.drivers.nova.servers import HERD_METADATA_KEYS, get_server, node_data, wait_for
from herd.drivers.operations import OperationParameter, OperationSpec
from herd.errors import Conflict, DriverError, InvalidRequest

if TYPE_CHECKING:
    from herd.drivers.nova.driver import NovaServerDriver


def _text(description: str, required: bool = False) -> OperationParameter:
    return OperationParameter("String", description, required=required)


NOVA_OPERATIONS: dict[str, OperationSpec] = {
    "reboot": OperationSpec(
        "Reboot the nova server.",
        {
            "type": OperationParameter(
                "String",
                "Type of reboot which can be 'SOFT' or 'HARD'.",
                allowed=("SOFT", "HARD"),
            )
        },
    ),
    "rebuild": OperationSpec("Rebuild the server using current image and admin password."),
    "change_password": OperationSpec(
        "Change the administrator password.",
        {"admin_pass": _text("New password for the administrator.", required=True)},
    ),
    "pause": OperationSpec("Pause the server from running."),
    "unpause": OperationSpec("Unpause the server to running state."),
    "suspend": OperationSpec("Suspend the running of the server."),
    "resume": OperationSpec("Resume the running of the server."),
    "lock": OperationSpec("Lock the server."),
    "unlock": OperationSpec("Unlock the server."),
    "start": OperationSpec("Start the server."),
    "stop": OperationSpec("Stop the server."),
    "rescue": OperationSpec(
        "Rescue the server.",
        {
            "image_ref": _text("A string referencing the image to use."),
            "admin_pass": _text("Password of the rescued server."),
        },
    ),
    "unrescue": OperationSpec("Unrescue the server."),
    "evacuate": OperationSpec(
        "Evacuate the server to a different host.",
        {
            "host": _text("The target host to evacuate the server."),
            "force": _text("Whether the evacuation should be a forced one."),
        },
    ),
    "migrate": OperationSpec("Migrate the server to another host (cold), and confirm it."),
}

#: operation -> (openstacksdk compute method, the status it ends in; None: no wait)
_SIMPLE: dict[str, tuple[str, str | None]] = {
    "pause": ("pause_server", "PAUSED"),
    "unpause": ("unpause_server", "ACTIVE"),
    "suspend": ("suspend_server", "SUSPENDED"),
    "resume": ("resume_server", "ACTIVE"),
    "lock": ("lock_server", None),
    "unlock": ("unlock_server", None),
    "start": ("start_server", "ACTIVE"),
    "stop": ("stop_server", "SHUTOFF"),
    "unrescue": ("unrescue_server", "ACTIVE"),
}


class NovaOperationsMixin:
    """Operations and adoption of :class:`~herd.drivers.nova.driver.NovaServerDriver`."""

    def run_operation(
        self, ref: ResourceRef, request: NodeRequest, operation: str, params: Mapping[str, Any]
    ) -> CreatedResource:
        """Run one of Senlin's server operations and wait for its outcome."""
        driver = cast("NovaServerDriver", self)
        if operation == "reboot":
            kind = str(params.get("type") or "SOFT").upper()
            if kind not in ("SOFT", "HARD"):
                raise DriverError(f"Type of reboot which can be 'SOFT' or 'HARD', not '{kind}'")
            return driver.reboot_server(ref, request, kind)
        if operation == "rebuild":
            return driver.rebuild(ref, request)
        conn, server_id, region = driver._target(ref, request)
        compute = conn.compute
        done: set[str] | None = {"ACTIVE"}
        if operation in _SIMPLE:
            method, status = _SIMPLE[operation]
            driver.cloud.call(f"{operation} of the server", getattr(compute, method), server_id)
            done = {status} if status else None
        elif operation == "change_password":
            driver.cloud.call(
                "changing the password",
                compute.change_server_password,
                server_id,
                str(params["admin_pass"]),
            )
            done = None
        elif operation == "rescue":
            image = params.get("image_ref")
            if image:
                found = driver.resolver.image(conn, region, str(image))
                if found is None:
                    raise DriverError(f"The specified image '{image}' could not be found.")
                image = found.id
            driver.cloud.call(
                "rescuing the server",
                compute.rescue_server,
                server_id,
                admin_pass=params.get("admin_pass"),
                image=image,
            )
            done = {"RESCUE"}
        elif operation == "evacuate":
            force = str(params.get("force", "")).lower() in ("1", "true", "yes", "on")
            driver.cloud.call(
                "evacuating the server",
                compute.evacuate_server,
                server_id,
                host=params.get("host"),
                force=force or None,
            )
        elif operation == "migrate":
            driver.cloud.call("migrating the server", compute.migrate_server, server_id)
            wait_for(
                driver.cloud, conn, server_id, {"VERIFY_RESIZE", "ACTIVE"},
                driver.options.timeout, "migrating",
            )  # fmt: skip
            server = get_server(driver.cloud, conn, server_id)
            if server is not None and server.status == "VERIFY_RESIZE":
                driver.cloud.call(
                    "confirming the migration", compute.confirm_server_resize, server_id
                )
        else:
            raise DriverError(f"unknown operation '{operation}'")
        driver.quiet(server_id)  # its notifications may still be on their way
        if done is None:
            server = get_server(driver.cloud, conn, server_id)
            if server is None:
                raise DriverError(f"server {server_id} does not exist")
        else:
            server = wait_for(
                driver.cloud, conn, server_id, done, driver.options.timeout, operation
            )
        return CreatedResource(server.id, node_data(server, region))

    # -- adoption (Senlin API 1.7) -----------------------------------------------------------

    def adopt_preview(
        self, identity: str, overrides: Mapping[str, Any] | None, snapshot: bool
    ) -> AdoptedResource:
        """The profile that would make server ``identity`` again (Senlin's do_adopt).

        ``snapshot`` is accepted and, as in Senlin, not acted on: the server's own
        image is the profile's image.
        """
        driver = cast("NovaServerDriver", self)
        try:
            conn = driver._shared_connection(None, "adopting a server")
            server = get_server(driver.cloud, conn, identity)
        except DriverError as exc:
            raise InvalidRequest(
                f"Cannot ask Nova about '{identity}': {exc}", field="identity"
            ) from None
        if server is None:
            raise InvalidRequest(
                f"The specified server '{identity}' could not be found.", field="identity"
            )
        owner = (server.metadata or {}).get("cluster_node_id")
        if owner and driver.options.owner_tag in (server.tags or []):
            raise Conflict(f"The server '{identity}' already backs node '{owner}'.")
        data = node_data(server, None)
        metadata = {k: v for k, v in (server.metadata or {}).items() if k not in HERD_METADATA_KEYS}
        generated: dict[str, Any] = {
            "auto_disk_config": getattr(server, "disk_config", "AUTO") == "AUTO",
            "availability_zone": server.availability_zone,
            "config_drive": bool(getattr(server, "has_config_drive", False)),
            "flavor": data["flavor"],
            "image": data["image"],
            "key_name": server.key_name,
            "metadata": metadata,
            "name": server.name,
            "security_groups": sorted(
                {g["name"] for g in (getattr(server, "security_groups", None) or [])}
            ),
        }
        generated = {key: value for key, value in generated.items() if value not in (None, "")}
        properties = driver.validate_properties(merge_overrides(generated, overrides))
        return AdoptedResource(identity, properties, data)

    def claim(self, resource: AdoptedResource, node_id: str) -> None:
        """Tag the server as this herd's and record its node in Senlin's metadata key."""
        driver = cast("NovaServerDriver", self)
        conn = driver.node_connection(node_id, None)
        compute = conn.compute
        for tag in (driver.options.owner_tag, node_tag(node_id)):
            driver.cloud.call(
                "tagging the server", compute.add_tag_to_server, resource.physical_id, tag
            )
        driver.cloud.call(
            "setting the server's metadata",
            compute.set_server_metadata,
            resource.physical_id,
            cluster_node_id=node_id,
        )
