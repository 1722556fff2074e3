"""What the request field types say in ``/openapi.json``, made from what they check.

:class:`Checked` is a ``BeforeValidator`` that also writes its part of the field's JSON
schema, so :mod:`herd.api.schemas.base`'s types (``senlin_int``, ``senlin_str``, ``one_of``,
...) document the bounds, lengths and values they check from the same arguments. The rest
are ``json_schema_extra`` helpers for what a model's fields alone do not say.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import get_args

from pydantic import BaseModel, BeforeValidator, GetJsonSchemaHandler
from pydantic.config import JsonDict
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

#: a text that is not blank (``/openapi.json``; herd's strings also never hold NUL, which
#: ``herd.api.openapi`` adds to every string's pattern)
NOT_BLANK = r"\S"


@dataclass(frozen=True)
class Checked(BeforeValidator):
    """A ``BeforeValidator`` that also says in ``/openapi.json`` what it checks.

    ``documented`` is merged into the field's JSON schema (``minimum``, ``enum``, ...), so
    the document is made from the same arguments as the check and cannot drift from it.
    """

    documented: Mapping[str, object] = field(default_factory=dict)
    #: the check also takes this JSON type (a number where Senlin takes its text)
    also: str | None = None

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = handler(core_schema)
        if self.also is not None:
            options = schema.pop("anyOf", None) or [{"type": schema.pop("type")}]
            schema["anyOf"] = [*options, {"type": self.also}]
        schema.update(self.documented)
        return schema


def any_case(words: Iterable[str]) -> str:
    """A pattern matching each of ``words`` in any case (``[Rr][Ee]...``), for the document."""

    def letters(word: str) -> str:
        return "".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else re.escape(c) for c in word)

    return "^(" + "|".join(letters(word) for word in words) + ")$"


def also_required(*keys: str) -> Callable[[JsonDict], None]:
    """``json_schema_extra`` of a model whose ``keys`` have a default only so that a service
    can refuse their absence with Senlin's text, in Senlin's order: the document says that
    they are required and not null."""

    def document(schema: JsonDict) -> None:
        required = schema.setdefault("required", [])
        assert isinstance(required, list)
        properties = schema.get("properties")
        assert isinstance(properties, dict)
        for key in keys:
            if key not in required:
                required.append(key)
            prop = properties[key]
            assert isinstance(prop, dict)
            options = prop.get("anyOf")
            if isinstance(options, list):
                prop["anyOf"] = [o for o in options if o != {"type": "null"}]

    return document


def _accepts_empty(model: type[BaseModel]) -> bool:
    schema = model.model_json_schema()
    return not any(schema.get(k) for k in ("required", "anyOf", "minProperties"))


def _one_key(schema: JsonDict, cls: type) -> None:
    """A body that names exactly one key (an action, an operation), whose value may be null
    (read as ``{}``) only where ``{}`` is valid: ``{"policy_attach": null}`` misses its
    ``policy_id``, and the document says so."""
    schema.update(minProperties=1, maxProperties=1)
    properties = schema.get("properties")
    assert isinstance(properties, dict) and isinstance(cls, type) and issubclass(cls, BaseModel)
    for name, info in cls.model_fields.items():
        models = [a for a in get_args(info.annotation) if isinstance(a, type)]
        inner = [m for m in models if issubclass(m, BaseModel)]
        prop = properties.get(name)
        if inner and isinstance(prop, dict) and not _accepts_empty(inner[0]):
            options = prop.get("anyOf")
            if isinstance(options, list):
                prop["anyOf"] = [o for o in options if o != {"type": "null"}]


#: the config of a body that names exactly one key (an action, an operation)
ONE_KEY = _one_key
