"""Profiles: how their specs are validated, and what sets them apart from policies."""

from __future__ import annotations

from collections.abc import Mapping

import yaml

from herd.api.deps import Services
from herd.api.schemas.specs import ProfileCreate, ProfileUpdate
from herd.api.services.common import reject_unknown
from herd.api.services.spec_resources import SpecKind
from herd.errors import InvalidSpec
from herd.store.models import ProfileRow
from herd.store.spec_rows import profile_in_use
from herd.types import ResourceType


def spec_map(spec: object) -> dict[str, object]:
    """The spec as a map (a YAML string is parsed); InvalidSpec when it is none."""
    if spec is None:
        raise InvalidSpec("'spec' is a required property", field="spec")
    if isinstance(spec, str | bytes):
        try:
            spec = yaml.safe_load(spec)
        except yaml.YAMLError as exc:
            first = str(exc).splitlines()[0] if str(exc) else "invalid YAML"
            raise InvalidSpec(f"Failed parsing the spec: {first}", field="spec") from None
    if not isinstance(spec, Mapping):
        raise InvalidSpec("The provided spec is not a map.", field="spec")
    return dict(spec)


def parse_profile_spec(services: Services, raw_spec: object) -> tuple[str, dict[str, object]]:
    """Validate a profile spec through the driver registry; return (type, spec)."""
    spec = spec_map(raw_spec)
    if spec.get("type") is None:
        raise InvalidSpec("The 'type' key is missing from the provided spec map.", field="type")
    if spec.get("version") is None:
        raise InvalidSpec(
            "The 'version' key is missing from the provided spec map.", field="version"
        )
    reject_unknown(spec, ("type", "version", "properties", "description"))
    properties = spec.get("properties", {})
    if not isinstance(properties, Mapping):
        raise InvalidSpec(f"'{properties}' is not a Map", field="properties")
    given = spec["version"]
    # the registry reads a version as its text: any other value as its str() (the same)
    version = given if isinstance(given, str | int | float) else str(given)
    type_name = services.drivers.full_name(str(spec["type"]), version)
    # the driver's backend is asked too (a Nova profile's flavor, image...): this runs
    # for a profile's create and validate, never inside a transaction
    services.drivers.validate_for_create(str(spec["type"]), version, properties)
    return type_name, spec


def _own_columns(request: ProfileCreate | None) -> dict[str, object]:
    return {"meta_data": (request.metadata or {}) if request is not None else {}}


def _updated_columns(request: ProfileUpdate) -> dict[str, object]:
    given = {"name": request.name, "meta_data": request.metadata}
    return {column: value for column, value in given.items() if value is not None}


PROFILES: SpecKind[ProfileRow] = SpecKind(
    kind=ResourceType.PROFILE,
    plural="profiles",
    model=ProfileRow,
    create_request=ProfileCreate,
    update_request=ProfileUpdate,
    parse_spec=parse_profile_spec,
    own_columns=_own_columns,
    updated_columns=_updated_columns,
    in_use=profile_in_use,
    in_use_message=(
        "The profile '{id}' cannot be deleted: still referenced by some clusters and/or nodes."
    ),
    refuse_empty_update=True,
)
