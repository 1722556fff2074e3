"""The JSON Schema of an iallocator request as :mod:`herd.planner.codec` reads it.

``/openapi.json`` documents ``POST /v1/relocation-plans`` with it (the route reads the body
as bytes and hands it to the parser, so no model stands for it). It says what the readers
of :mod:`herd.planner.fields` check: the keys they ``require``, the JSON types their
``as_*`` take (``as_int`` takes any number, as hail does), the enums, and ``null`` wherever
a reader takes ``optional`` (null reads as the default). Unknown keys are ignored by the
parser, so the schema allows them. What no schema can say (a node's group and an
instance's nodes must be in the message, the request must name its instances) is left to
the parser's "Wrong number of elems found" and "unknown node group" errors.

:func:`check_numbers` enforces the schema's bounds on numbers (at most 2^53 in magnitude; a
node's CPU counts whole and not negative), walking the schema itself so that what the
document declares is what is refused; the parser calls it first, so the planner's
arithmetic only meets numbers within them.
"""

from __future__ import annotations

from typing import cast

from herd.errors import MalformedRequest
from herd.planner.model import AdminState, AllocPolicy, DiskTemplate, EvacMode, RequestType

#: the largest magnitude of a number in a request: the planner's float arithmetic (squares
#: summed over nodes when scoring) overflowed on numbers near 1e308, and an integer past a
#: double's range fails its conversion; Ganeti's figures (MiB, counts) are far below
LIMIT = 2**53
NUMBER: dict[str, object] = {"type": "number", "minimum": -LIMIT, "maximum": LIMIT}
#: a node's CPU count: Ganeti reports the CPUs a node has (doc/iallocator.rst: "the
#: physical number of CPUs present on the machine"), never a fraction or a negative; the
#: planner divides by it (and hail reads it as a float and takes 5e-268 CPUs)
CPUS: dict[str, object] = {
    "type": "integer",
    "minimum": 0,
    "maximum": LIMIT,
    "description": "a count of CPUs, a whole number from 0 to 2^53",
}
STRING: dict[str, object] = {"type": "string"}
STRINGS: dict[str, object] = {"type": "array", "items": STRING}


def _maybe(schema: dict[str, object]) -> dict[str, object]:
    """A key read with ``optional``: JSON null reads as the default."""
    return {"anyOf": [schema, {"type": "null"}]}


def _object(
    required: dict[str, object], optional: dict[str, object] | None = None
) -> dict[str, object]:
    return {
        "type": "object",
        "required": sorted(required),
        "properties": {**required, **(optional or {})},
    }


ISPEC = {
    "type": "object",
    "properties": {
        key: NUMBER
        for key in (
            "memory-size",
            "cpu-count",
            "disk-size",
            "disk-count",
            "nic-count",
            "spindle-use",
        )
    },
}
IPOLICY = _object(
    {},
    {
        "minmax": _maybe({"type": "array", "items": _object({"min": ISPEC, "max": ISPEC})}),
        "disk-templates": _maybe(STRINGS),
        "vcpu-ratio": _maybe(NUMBER),
        "spindle-ratio": _maybe(NUMBER),
    },
)
GROUP = _object(
    {
        "name": STRING,
        "alloc_policy": {"type": "string", "enum": [p.wire_name for p in AllocPolicy]},
        "ipolicy": IPOLICY,
    },
    {"networks": _maybe(STRINGS), "tags": _maybe(STRINGS)},
)
#: what Ganeti reports of a live node (online and vm-capable); it does not query the others
NODE_FIGURES = (
    "reserved_memory",
    "total_memory",
    "free_memory",
    "total_disk",
    "free_disk",
    "total_cpus",
)
NODE = {
    **_object(
        {
            "offline": {"type": "boolean"},
            "drained": {"type": "boolean"},
            "group": STRING,
            "ndparams": _object(
                {},
                {
                    "exclusive_storage": _maybe({"type": "boolean"}),
                    "spindle_count": _maybe(NUMBER),
                },
            ),
        },
        {
            "vm_capable": _maybe({"type": "boolean"}),
            "master_capable": _maybe({"type": "boolean"}),
            "tags": _maybe(STRINGS),
            "total_spindles": _maybe(NUMBER),
            "free_spindles": _maybe(NUMBER),
            **{key: NUMBER for key in NODE_FIGURES},
            "total_cpus": CPUS,
            "reserved_cpus": _maybe(CPUS),
        },
    ),
    # a live node must report its figures: offline false and vm_capable not false
    "if": {
        "properties": {"offline": {"const": False}, "vm_capable": {"not": {"const": False}}},
        "required": ["offline"],
    },
    "then": {"required": list(NODE_FIGURES)},
}
DISK = _object({"size": NUMBER}, {"spindles": {"anyOf": [NUMBER, {"type": "null"}]}})
#: an instance's spec, as ``instances.read_spec`` reads it (the name comes from the map key)
SPEC_FIELDS: dict[str, object] = {
    "disk_template": {"type": "string", "enum": [t.value for t in DiskTemplate]},
    "disks": {"type": "array", "items": DISK},
    "nics": {"type": "array"},
    "memory": NUMBER,
    "vcpus": NUMBER,
    "disk_space_total": NUMBER,
    "spindle_use": NUMBER,
    "tags": STRINGS,
}
SPEC_OPTIONAL: dict[str, object] = {
    "admin_state": _maybe({"type": "string", "enum": [s.value for s in AdminState]}),
    "forthcoming": _maybe({"type": "boolean"}),
}
INSTANCE = _object(
    {**SPEC_FIELDS, "nodes": {**STRINGS, "minItems": 1}},
    SPEC_OPTIONAL,
)
#: an allocation (``allocate``, and each item of ``multi-allocate``), as ``codec._allocate``
#: reads it
ALLOCATE_FIELDS: dict[str, object] = {**SPEC_FIELDS, "name": STRING, "required_nodes": NUMBER}
ALLOCATE_OPTIONAL: dict[str, object] = {
    **SPEC_OPTIONAL,
    "group_name": {},  # any value, read as its text
    "restrict-to-nodes": _maybe(STRINGS),
}


def _request(
    kind: RequestType, required: dict[str, object], optional: dict[str, object] | None = None
) -> dict[str, object]:
    return _object({"type": {"const": kind.value}, **required}, optional)


#: ``request``: one object per request type, told apart by ``type``
REQUEST: dict[str, object] = {
    "oneOf": [
        _request(RequestType.ALLOCATE, ALLOCATE_FIELDS, ALLOCATE_OPTIONAL),
        _request(
            RequestType.MULTI_ALLOCATE,
            {
                "instances": {
                    "type": "array",
                    "items": _object(ALLOCATE_FIELDS, ALLOCATE_OPTIONAL),
                }
            },
        ),
        _request(
            RequestType.RELOCATE,
            {
                "name": STRING,
                "required_nodes": NUMBER,
                "disk_space_total": NUMBER,
                "relocate_from": STRINGS,
            },
        ),
        _request(RequestType.ALLOCATE_SECONDARY, {"name": STRING}),
        _request(RequestType.CHANGE_GROUP, {"instances": STRINGS, "target_groups": STRINGS}),
        _request(
            RequestType.NODE_EVACUATE,
            {
                "instances": STRINGS,
                "evac_mode": {"type": "string", "enum": [m.value for m in EvacMode]},
            },
        ),
    ]
}
#: the whole message Ganeti writes for its allocator (protocol version 2)
IALLOCATOR_REQUEST: dict[str, object] = {
    "title": "IAllocatorRequest",
    **_object(
        {
            "request": REQUEST,
            "nodegroups": {"type": "object", "additionalProperties": GROUP},
            "nodes": {"type": "object", "additionalProperties": NODE},
            "instances": {"type": "object", "additionalProperties": INSTANCE},
        },
        {"enabled_hypervisors": _maybe(STRINGS), "cluster_tags": _maybe(STRINGS)},
    ),
}


def _fits(value: object, branch: object) -> bool:
    """Whether ``branch`` of a ``oneOf`` is the request type ``value`` says it is."""
    kind = branch.get("properties", {}).get("type", {}) if isinstance(branch, dict) else {}
    return (
        not isinstance(kind, dict)
        or "const" not in kind
        or (isinstance(value, dict) and value.get("type") == kind["const"])
    )


def _subschemas(schema: dict[str, object]) -> list[object]:
    nested = [schema.get("additionalProperties"), schema.get("items")]
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key, [])
        nested += branches if isinstance(branches, list) else []
    properties = schema.get("properties", {})
    return nested + (list(properties.values()) if isinstance(properties, dict) else [])


def _mark_numbered(schema: object) -> bool:
    """Whether ``schema`` declares a bounded number anywhere in it. Those that do go in
    :data:`_NUMBERED`, with their properties that do; the rest is not walked (tags and
    names are most of a large request)."""
    if not isinstance(schema, dict):
        return False
    holds = "maximum" in schema
    for sub in _subschemas(schema):
        holds = _mark_numbered(sub) or holds
    if holds:
        properties = cast(dict[str, object], schema.get("properties", {}))
        _NUMBERED[id(schema)] = [(k, sub) for k, sub in properties.items() if id(sub) in _NUMBERED]
    return holds


#: id of a schema holding a bounded number -> its properties that hold one
_NUMBERED: dict[int, list[tuple[str, object]]] = {}


def _where(path: list[str | int]) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else part
    return text


def _check_number(value: float, schema: dict[str, object], path: list[str | int]) -> None:
    low, high = cast(int, schema.get("minimum", -LIMIT)), cast(int, schema["maximum"])
    whole = schema.get("type") != "integer" or float(value).is_integer()
    if low <= value <= high and whole:
        return
    where = _where(path)
    if "description" in schema:
        message = f"{where}: {schema['description']} (got {value!r})"
    else:
        message = f"{where}: number out of range (at most {LIMIT} in magnitude)"
    raise MalformedRequest(message, field=where)


def _walk(value: object, schema: object, path: list[str | int]) -> None:
    """Check the numbers of ``value`` where ``schema`` declares a bounded number (unknown
    keys, which the parser ignores, are not looked at)."""
    if not isinstance(schema, dict) or id(schema) not in _NUMBERED:
        return
    for branch in schema.get("anyOf", ()):
        _walk(value, branch, path)
    for branch in schema.get("oneOf", ()):
        if _fits(value, branch):
            _walk(value, branch, path)
    if "maximum" in schema:
        if isinstance(value, int | float) and not isinstance(value, bool):
            _check_number(value, schema, path)
    elif isinstance(value, dict):
        extra = schema.get("additionalProperties")
        if id(extra) in _NUMBERED:  # a map (nodes, instances): every value
            for key, item in value.items():
                path.append(key)
                _walk(item, extra, path)
                path.pop()
        for key, sub in _NUMBERED[id(schema)]:
            item = value.get(key)
            if type(item) is int and sub is NUMBER and -LIMIT <= item <= LIMIT:
                continue  # the common case, without a call (30k instances: 4 each)
            if key in value:
                path.append(key)
                _walk(item, sub, path)
                path.pop()
    elif isinstance(value, list):
        items = schema.get("items")
        for index, item in enumerate(value):
            path.append(index)
            _walk(item, items, path)
            path.pop()


_mark_numbered(IALLOCATOR_REQUEST)


def check_numbers(message: object) -> None:
    """Refuse a request holding a number the schema does not allow where it declares one:
    past :data:`LIMIT` in magnitude, or a CPU count that is negative or not whole.

    The parser (``codec.parse_request``) calls it first, so the planner's arithmetic only
    meets numbers within these bounds.

    Raises:
        MalformedRequest: naming the first such number.
    """
    _walk(message, IALLOCATOR_REQUEST, [])
