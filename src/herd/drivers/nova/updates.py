"""Moving a Nova server to a new ``os.nova.server`` profile in place (Senlin's do_update).

* ``name`` -> rename; ``admin_pass`` -> change the password; ``metadata`` -> set
  the new keys and delete the removed ones (herd's ``cluster_*`` keys stay);
* ``image`` -> rebuild with the new image (and the new name and password);
* ``flavor`` -> resize, wait for VERIFY_RESIZE, confirm (a failed resize is
  reverted);
* any other property (networks, key pair, zone, user data...) cannot change on
  a running server: the server is recreated, as herd does for other drivers.
  Senlin ignored most of these silently; herd does not leave the node unlike
  its profile.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from herd.drivers.base import CreatedResource, NodeRequest, ResourceRef
from herd.drivers.nova.sdk import NovaConnection
from herd.drivers.nova.servers import (
    HERD_METADATA_KEYS,
    get_server,
    node_data,
    server_metadata,
    wait_for,
)
from herd.errors import DriverError

if TYPE_CHECKING:
    from herd.drivers.nova.driver import NovaServerDriver

#: the properties a server can take in place
IN_PLACE = frozenset({"name", "admin_pass", "metadata", "image", "flavor"})


def needs_recreate(old: Mapping[str, object], new: Mapping[str, object]) -> list[str]:
    """The changed properties that a running server cannot take (sorted)."""
    return sorted(
        key for key in set(old) | set(new) if key not in IN_PLACE and old.get(key) != new.get(key)
    )


def update_server(
    driver: NovaServerDriver, ref: ResourceRef, request: NodeRequest
) -> CreatedResource:
    """Apply the new profile to the node's server (see the module text).

    Raises:
        DriverError: Nova refused a step, or the server did not settle in time.
    """
    old, new = ref.properties, request.properties
    if needs_recreate(old, new):
        return driver.recover(ref, request)
    conn, server_id, region = driver._target(ref, request)
    cloud, compute, timeout = driver.cloud, conn.compute, driver.options.timeout
    old_name = old.get("name") or request.name
    new_name = new.get("name") or request.name
    new_image = _resolved(driver, conn, region, "image", new.get("image"))
    old_image = _resolved(driver, conn, region, "image", old.get("image"))
    if new_image != old_image:
        if not new_image:
            raise DriverError(
                "Updating Nova server with image set to None is not supported by Nova"
            )
        extra = {"admin_password": new["admin_pass"]} if new.get("admin_pass") else {}
        cloud.call(
            "rebuilding the server",
            compute.rebuild_server,
            server_id,
            new_image,
            name=new_name,
            **extra,
        )
        wait_for(cloud, conn, server_id, {"ACTIVE"}, timeout, "rebuilding")
    else:
        if new_name != old_name:
            cloud.call("renaming the server", compute.update_server, server_id, name=new_name)
        if new.get("admin_pass") and new.get("admin_pass") != old.get("admin_pass"):
            cloud.call(
                "changing the password",
                compute.change_server_password,
                server_id,
                new["admin_pass"],
            )
    new_flavor = _resolved(driver, conn, region, "flavor", new["flavor"])
    if new_flavor != _resolved(driver, conn, region, "flavor", old["flavor"]):
        _resize(driver, conn, server_id, str(new_flavor))
    _update_metadata(driver, conn, server_id, request, old, new)
    server = get_server(cloud, conn, server_id)
    if server is None:
        raise DriverError(f"server {server_id} disappeared while being updated")
    driver.quiet(server_id)
    return CreatedResource(server.id, node_data(server, region))


def _resolved(
    driver: NovaServerDriver, conn: NovaConnection, region: str | None, kind: str, name: Any
) -> str | None:
    if not name:
        return None
    find = driver.resolver.flavor if kind == "flavor" else driver.resolver.image
    found = find(conn, region, str(name))
    if found is None:
        raise DriverError(f"The specified {kind} '{name}' could not be found.")
    return str(found.id)


def _resize(driver: NovaServerDriver, conn: NovaConnection, server_id: str, flavor_id: str) -> None:
    cloud, compute, timeout = driver.cloud, conn.compute, driver.options.timeout
    cloud.call("resizing the server", compute.resize_server, server_id, flavor_id)
    try:
        wait_for(cloud, conn, server_id, {"VERIFY_RESIZE"}, timeout, "resizing")
    except DriverError as exc:
        server = get_server(cloud, conn, server_id)
        if server is not None and server.status in ("RESIZE", "VERIFY_RESIZE"):
            cloud.call("reverting the resize", compute.revert_server_resize, server_id)
        raise DriverError(f"resize of server {server_id} failed: {exc}") from None
    cloud.call("confirming the resize", compute.confirm_server_resize, server_id)
    wait_for(cloud, conn, server_id, {"ACTIVE", "SHUTOFF"}, timeout, "confirming the resize")


def _update_metadata(
    driver: NovaServerDriver,
    conn: NovaConnection,
    server_id: str,
    request: NodeRequest,
    old: Mapping[str, Any],
    new: Mapping[str, Any],
) -> None:
    before = server_metadata(request, old.get("metadata") or {})
    after = server_metadata(request, new.get("metadata") or {})
    if before == after:
        return
    removed = [key for key in before if key not in after and key not in HERD_METADATA_KEYS]
    if removed:
        driver.cloud.call(
            "deleting server metadata", conn.compute.delete_server_metadata, server_id, removed
        )
    driver.cloud.call(
        "setting server metadata", conn.compute.set_server_metadata, server_id, **after
    )
