"""Bodies of ``/v1/profiles`` and ``/v1/policies`` (the spec itself is checked by its type)."""

from __future__ import annotations

from typing import Annotated

from pydantic import ConfigDict, Field
from pydantic.config import JsonDict

from herd.api.schemas.base import (
    JsonMap,
    Name,
    NewName,
    RequestModel,
    senlin_str,
)
from herd.api.schemas.documented import also_required

SPEC_DESCRIPTION = (
    "The spec: a map {type, version, properties} or the same as a YAML string. "
    "Its type validates it (400 InvalidSpec naming the key)."
)
#: a spec is a map or YAML text; the service refuses its absence ("'spec' is a required
#: property") after the name's checks, so the field has a default
SPEC_SCHEMA: JsonDict = {"type": ["object", "string"]}
SPEC_REQUIRED = ConfigDict(json_schema_extra=also_required("spec"))


class ProfileCreate(RequestModel):
    """``POST /v1/profiles`` ``{"profile": {...}}``."""

    model_config = SPEC_REQUIRED

    name: Name
    spec: object = Field(default=None, description=SPEC_DESCRIPTION, json_schema_extra=SPEC_SCHEMA)
    metadata: JsonMap = None


class ProfileUpdate(RequestModel):
    """``PATCH /v1/profiles/<id>`` ``{"profile": {...}}``."""

    name: NewName = None
    metadata: JsonMap = None


class SpecValidate(RequestModel):
    """``POST /v1/profiles/validate`` and ``/v1/policies/validate`` (1.2)."""

    model_config = SPEC_REQUIRED

    spec: object = Field(default=None, description=SPEC_DESCRIPTION, json_schema_extra=SPEC_SCHEMA)


class PolicyCreate(RequestModel):
    """``POST /v1/policies`` ``{"policy": {...}}``."""

    model_config = SPEC_REQUIRED

    name: Name
    spec: object = Field(default=None, description=SPEC_DESCRIPTION, json_schema_extra=SPEC_SCHEMA)


class PolicyUpdate(RequestModel):
    """``PATCH /v1/policies/<id>`` ``{"policy": {...}}``: the name is all a policy may
    change, so Senlin requires it ("'name' is a required property")."""

    name: Annotated[str, senlin_str(required=True, non_empty=True, strings_only=True)]
