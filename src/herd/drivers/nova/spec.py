"""The ``os.nova.server`` profile properties (Senlin's spec): schema and pure validation.

Every key Senlin's ``ServerProfile`` accepted is accepted here with the same
shape, so a Senlin user's spec validates unchanged; the texts of Senlin's
schema errors are kept (``Unrecognizable spec item 'x'``, ``The value 'x' is not
a valid Boolean``, ``'x' is not a Map``...), prefixed with the dotted key as
herd's other drivers do. What needs the cloud (does the flavor exist, is there
a network service) is checked by :mod:`herd.drivers.nova.resolve`; what herd
cannot honour on any cloud is refused here, naming the key.
"""

from __future__ import annotations

from collections.abc import Mapping

from herd.drivers.spec_values import (
    boolean,
    fail,
    integer,
    known,
    mapping,
    optional_string,
    region_context,
    sequence,
    string,
)
from herd.errors import InvalidSpec

BDM2_KEYS = (
    "uuid",
    "source_type",
    "destination_type",
    "disk_bus",
    "device_name",
    "volume_size",
    "guest_format",
    "boot_index",
    "device_type",
    "delete_on_termination",
    "volume_type",
)
BDM2_SOURCE_TYPES = ("image", "snapshot", "volume", "blank")
BDM2_DESTINATION_TYPES = ("volume", "local")
NETWORK_KEYS = (
    "network",
    "port",
    "vnic_type",
    "fixed_ip",
    "security_groups",
    "floating_network",
    "floating_ip",
    "subnet",
)
VNIC_TYPES = ("normal", "direct", "macvtap")
#: Nova refuses user data whose base64 form is longer than this
USER_DATA_LIMIT = 65535


def _entry(kind: str, description: str, **extra: object) -> dict[str, object]:
    return {"type": kind, "description": description, **extra}


PROPERTIES_SCHEMA: dict[str, dict[str, object]] = {
    "context": _entry("Map", "Customized security context: herd honours 'region_name'."),
    "admin_pass": _entry("String", "Password for the administrator account."),
    "auto_disk_config": _entry(
        "Boolean", "Whether the disk partition is done automatically.", default=True
    ),
    "availability_zone": _entry("String", "Name of availability zone for running the server."),
    "block_device_mapping_v2": _entry(
        "List", "Block devices for the server (Nova's block_device_mapping_v2)."
    ),
    "config_drive": _entry("Boolean", "Whether config drive should be enabled for the server."),
    "flavor": _entry("String", "Name or ID of the flavor.", required=True, updatable=True),
    "image": _entry("String", "Name or ID of the image.", updatable=True),
    "key_name": _entry("String", "Name of Nova keypair to be injected to server."),
    "metadata": _entry("Map", "Key/value pairs of the server (<= 255 chars).", updatable=True),
    "name": _entry("String", "Server name; the node name when omitted.", updatable=True),
    "networks": _entry("List", "Networks of the server (network, port, fixed_ip)."),
    "personality": _entry("List", "Files to inject (removed from Nova in API 2.57)."),
    "scheduler_hints": _entry("Map", "Scheduler hints (key/value pairs)."),
    "security_groups": _entry("List", "Names of security groups."),
    "user_data": _entry("String", "User data to be exposed by the metadata server."),
}


def _short_pairs(path: str, value: object) -> dict[str, str]:
    """Nova's metadata: text keys and values of at most 255 characters."""
    result: dict[str, str] = {}
    for key, item in mapping(path, value).items():
        text_key = string(path, key)
        if not 1 <= len(text_key) <= 255:
            raise fail(path, f"the key '{text_key[:40]}' must be 1 to 255 characters long")
        text = string(f"{path}.{text_key}", item)
        if len(text) > 255:
            raise fail(f"{path}.{text_key}", "the value is longer than 255 characters")
        result[text_key] = text
    return result


def _block_device(path: str, value: object) -> dict[str, object]:
    given = mapping(path, value)
    known(path, given, BDM2_KEYS)
    for key in ("source_type", "destination_type", "volume_size"):
        if given.get(key) is None:
            raise fail(path, f"Required spec item '{key}' not provided")
    result: dict[str, object] = {}
    for key, item in given.items():
        if item is None:
            continue
        if key in ("volume_size", "boot_index"):
            result[key] = integer(f"{path}.{key}", item)
        elif key == "delete_on_termination":
            result[key] = boolean(f"{path}.{key}", item)
        else:
            result[key] = string(f"{path}.{key}", item)
    if result["source_type"] not in BDM2_SOURCE_TYPES:
        raise fail(
            f"{path}.source_type",
            f"Volume source type, must be one of 'image', 'snapshot', 'volume' or 'blank', "
            f"not '{result['source_type']}'",
        )
    if result["destination_type"] not in BDM2_DESTINATION_TYPES:
        raise fail(
            f"{path}.destination_type",
            f"Volume destination type, must be 'volume' or 'local', "
            f"not '{result['destination_type']}'",
        )
    if result["source_type"] != "blank" and not result.get("uuid"):
        raise fail(path, f"a '{result['source_type']}' source needs the 'uuid' of that source")
    return result


def _network(path: str, value: object) -> dict[str, object]:
    given = mapping(path, value)
    known(path, given, NETWORK_KEYS)
    result: dict[str, object] = {}
    for key, item in given.items():
        if item is None:
            continue
        if key == "security_groups":
            groups = sequence(f"{path}.{key}", item)
            result[key] = [string(f"{path}.{key}[{i}]", g) for i, g in enumerate(groups)]
        else:
            result[key] = string(f"{path}.{key}", item)
    if result.get("port") is None and result.get("network") is None:
        raise fail(path, "One of 'port' and 'network' must be provided")
    if result.get("fixed_ip") and result.get("port") is not None:
        raise fail(
            path,
            "The 'port' property and the 'fixed_ip' property cannot be specified at the same time",
        )
    vnic = result.get("vnic_type")
    if vnic is not None and vnic not in VNIC_TYPES:
        raise fail(
            f"{path}.vnic_type",
            f"vnic_type: '{vnic}' is not supported.(supported types are: normal, direct, macvtap)",
        )
    for key in ("floating_network", "floating_ip"):
        if key in result:
            # Senlin made and deleted floating IPs itself through Neutron; herd lets Nova
            # make the server's ports and manages no floating IPs.
            raise fail(
                f"{path}.{key}",
                "herd does not manage floating IPs: associate them outside herd "
                f"(the '{key}' property is refused rather than ignored)",
            )
    for key in ("security_groups", "vnic_type", "subnet"):
        if key in result:
            # These are properties of a port Senlin created itself; herd hands Nova the
            # network (or the port) and Nova makes the port, so it cannot set them.
            raise fail(
                f"{path}.{key}",
                f"herd lets Nova create the port, so a per-port '{key}' cannot be honoured: "
                "create the port yourself and give its id as 'port'",
            )
    return result


def _user_data(value: object) -> str | None:
    text = optional_string("user_data", value)
    if text is not None and (len(text.encode()) + 2) // 3 * 4 > USER_DATA_LIMIT:
        raise fail("user_data", f"longer than Nova's {USER_DATA_LIMIT} bytes once base64-encoded")
    return text


def _scheduler_hints(value: object) -> dict[str, object]:
    result: dict[str, object] = {}
    for key, item in mapping("scheduler_hints", value).items():
        path = f"scheduler_hints.{key}"
        if isinstance(item, list):
            result[str(key)] = [string(f"{path}[{i}]", v) for i, v in enumerate(item)]
        else:
            result[str(key)] = string(path, item)
    return result


def validate_server_properties(properties: object) -> dict[str, object]:
    """Check an ``os.nova.server`` spec's properties; return them normalised.

    The result has every key (absent ones as None, or as their default), names and
    ids as strings. Nothing here asks the cloud.

    Raises:
        InvalidSpec: a key is unknown, a value has the wrong type or is refused;
            the message starts with the dotted key (``properties.networks[0].port``).
    """
    if not isinstance(properties, Mapping):
        raise InvalidSpec(f"'{properties}' is not a Map", field="properties")
    for key in properties:
        if key not in PROPERTIES_SCHEMA:
            raise fail(str(key), f"Unrecognizable spec item '{key}'")
    given = {key: value for key, value in properties.items() if value is not None}
    if given.get("flavor") in (None, ""):
        raise fail("flavor", "Required spec item 'flavor' not provided")
    if given.get("personality"):
        raise fail(
            "personality",
            "file injection was removed from Nova in API 2.57 and herd talks to Nova at its "
            "newest version: pass the files through 'user_data' (cloud-init write_files)",
        )
    bdm = given.get("block_device_mapping_v2")
    networks = given.get("networks")
    groups = given.get("security_groups")
    devices = (
        None
        if bdm is None
        else [
            _block_device(f"block_device_mapping_v2[{i}]", item)
            for i, item in enumerate(sequence("block_device_mapping_v2", bdm))
        ]
    )
    result: dict[str, object] = {
        "context": region_context(given["context"], "HERD_NOVA_CLOUD")
        if "context" in given
        else {},
        "admin_pass": optional_string("admin_pass", given.get("admin_pass")),
        "auto_disk_config": boolean("auto_disk_config", given.get("auto_disk_config", True)),
        "availability_zone": optional_string("availability_zone", given.get("availability_zone")),
        "block_device_mapping_v2": devices,
        "config_drive": None
        if given.get("config_drive") is None
        else boolean("config_drive", given["config_drive"]),
        "flavor": string("flavor", given["flavor"]),
        "image": optional_string("image", given.get("image")),
        "key_name": optional_string("key_name", given.get("key_name")),
        "metadata": _short_pairs("metadata", given.get("metadata", {})),
        "name": optional_string("name", given.get("name")),
        "networks": [
            _network(f"networks[{i}]", item)
            for i, item in enumerate(sequence("networks", networks if networks is not None else []))
        ],
        "personality": None,
        "scheduler_hints": _scheduler_hints(given.get("scheduler_hints", {})),
        "security_groups": [
            string(f"security_groups[{i}]", g)
            for i, g in enumerate(sequence("security_groups", groups if groups is not None else []))
        ],
        "user_data": _user_data(given.get("user_data")),
    }
    if not result["image"] and not any(
        d.get("boot_index") == 0 or d["source_type"] in ("volume", "snapshot")
        for d in devices or []
    ):
        # Nova would answer "Block Device Mapping is Invalid" or boot nothing
        raise fail("image", "Required spec item 'image' not provided (nor a boot device)")
    return result
