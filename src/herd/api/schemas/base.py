"""Typed request bodies that answer with Senlin's error texts.

Every request body is a :class:`RequestModel` (pydantic, unknown keys
forbidden). Field types carry Senlin's coercions and texts (``SenlinBool``,
:func:`senlin_int`, :func:`senlin_str`, ``JsonMap``, ...), so the one place that
turns a raw body into a typed request is :func:`parse_body`: it validates, picks
the error Senlin would report first (unknown keys, then missing keys, then bad
values) and raises :class:`~herd.errors.InvalidRequest` naming the field.

Routes receive the raw JSON through the dependencies of ``herd.api.bodies``, which call
:func:`parse_body`, so the texts stay ours rather than FastAPI's; ``herd.api.openapi``
publishes the models in ``/openapi.json`` from those dependencies.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Annotated, Any, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    ValidationError,
    ValidationInfo,
)
from pydantic_core import ErrorDetails, PydanticCustomError

from herd.api.input_guard import check_json
from herd.api.schemas.documented import NOT_BLANK, Checked, any_case
from herd.domain.values import bool_error, int_error, parse_bool, parse_int
from herd.errors import InvalidRequest

Model = TypeVar("Model", bound="RequestModel")

#: the largest integer a request may carry: INTEGER columns of both stores hold no more
STORED_INT_MAX = 2**31 - 1


class RequestModel(BaseModel):
    """Base of every request body: unknown keys are an error, fields are read-only."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @classmethod
    def extra_keys_message(cls, keys: Sequence[str]) -> str:
        names = ", ".join(f"'{key}'" for key in keys)
        verb = "was" if len(keys) == 1 else "were"
        return f"Additional properties are not allowed ({names} {verb} unexpected)"

    @classmethod
    def missing_key_message(cls, key: str) -> str:
        return f"'{key}' is a required property"

    @classmethod
    def not_a_map_message(cls, label: str | None) -> str:
        # Senlin's text names no key, also for a cluster action's parameters (``label``
        # goes into the error's field): senlin-tempest-plugin checks it
        return "The data provided is not a map"

    def given(self, key: str) -> bool:
        """True when the request named ``key`` with a value other than null."""
        return key in self.model_fields_set and getattr(self, key) is not None


# -- field types ---------------------------------------------------------------------------


def fail(message: str) -> PydanticCustomError:
    """An error whose text is already Senlin's (see :func:`parse_body`)."""
    return PydanticCustomError("senlin", "{message}", {"message": message})


def _required(info: ValidationInfo) -> PydanticCustomError:
    return fail(f"'{info.field_name}' is a required property")


def _to_bool(value: object, info: ValidationInfo) -> bool | None:
    if value is None:
        return None
    parsed = parse_bool(value)
    if parsed is None:
        raise fail(bool_error(value))
    return parsed


#: an optional boolean read as Senlin reads it ('y', 'on', 1, "true", ...)
SenlinBool = Annotated[bool | None, BeforeValidator(_to_bool)]


def senlin_int(
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    non_negative: bool = False,
    required: bool = False,
    maximum_from: str | None = None,
) -> BeforeValidator:
    """Senlin's integer coercion and range texts, for ``Annotated[int | None, ...]``.

    None passes (the field is optional) unless ``required``. No value is above
    :data:`STORED_INT_MAX`, whatever ``maximum`` says.

    ``maximum_from`` names a key of the validation context (passed to
    :func:`parse_body`) holding a maximum known only at run time, such as
    ``max_nodes_per_cluster``.
    """

    def check(value: object, info: ValidationInfo) -> int | None:
        field = str(info.field_name)
        if value is None:
            if required:
                raise _required(info)
            return None
        number = parse_int(value)
        if number is None:
            raise fail(int_error(field, value))
        if non_negative and number < 0:
            raise fail(f"Value must be >= 0 for field '{field}'.")
        if minimum is not None and number < minimum:
            raise fail(
                f"The value for the {field} field must be greater than or equal to {minimum}."
            )
        upper = maximum
        if maximum_from is not None and isinstance(info.context, Mapping):
            upper = info.context.get(maximum_from, upper)
        if upper is None or upper > STORED_INT_MAX:
            # The stores' INTEGER columns end here (a 500 from the database before).
            upper = STORED_INT_MAX
        if number > upper:
            raise fail(f"The value for the {field} field must be less than or equal to {upper}.")
        return number

    lowest = minimum if minimum is not None else (0 if non_negative else None)
    # a run-time maximum (``maximum_from``) is not in the document: the fuzz test's hooks
    # keep sizes within it (tests/functional/api/test_fuzz_openapi.py)
    documented: dict[str, object] = {"maximum": min(maximum or STORED_INT_MAX, STORED_INT_MAX)}
    if lowest is not None:
        documented["minimum"] = lowest
    return Checked(check, documented=documented)


def senlin_str(
    *,
    max_length: int = 255,
    required: bool = False,
    non_empty: bool = False,
    strings_only: bool = False,
) -> BeforeValidator:
    """A string (numbers are taken as their text, as Senlin's fields do, unless
    ``strings_only``), for ``Annotated``."""

    def check(value: object, info: ValidationInfo) -> str | None:
        field = str(info.field_name)
        if value is None:
            if required:
                raise _required(info)
            return None
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise fail(f"The value '{value}' is not a valid string.")
        if strings_only and not isinstance(value, str):
            raise fail(f"The value '{value}' is not a valid string.")
        text = str(value)
        if len(text) > max_length:
            raise fail(f"The value for {field} is too long: at most {max_length} characters.")
        if non_empty and not text.strip():
            raise fail(f"The value for {field} must not be empty.")
        return text

    documented: dict[str, object] = {"maxLength": max_length}
    if non_empty:
        documented.update(minLength=1, pattern=NOT_BLANK)
    return Checked(check, documented=documented, also=None if strings_only else "number")


#: a resource name: a non-empty string of at most 255 characters
Name = Annotated[str, senlin_str(required=True, non_empty=True)]
OptionalName = Annotated[str | None, senlin_str(non_empty=True)]
#: a new name in an update: a JSON string only (``name: 123`` is refused, not stored)
NewName = Annotated[str | None, senlin_str(non_empty=True, strings_only=True)]


#: a resource named by id, name or short id (looked up later)
Identity = Annotated[str, senlin_str(required=True)]
OptionalIdentity = Annotated[str | None, senlin_str()]


def _to_map(value: object, info: ValidationInfo) -> dict[str, object] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise fail(f"The value ({value}) is not a valid JSON map for '{info.field_name}'.")
    return {str(key): item for key, item in value.items()}


#: a free-form JSON object (metadata, config, params)
JsonMap = Annotated[dict[str, object] | None, BeforeValidator(_to_map)]


def identity_list(*, unique: bool = True, required: bool = True) -> BeforeValidator:
    """A non-empty list of resource identities (ids, names or short ids), for ``Annotated``."""

    def check(value: object, info: ValidationInfo) -> list[str] | None:
        field = str(info.field_name)
        if value is None:
            if required:
                raise _required(info)
            return None
        if not isinstance(value, list):
            raise fail(f"The value '{value}' is not a list for '{field}'.")
        if not value:
            raise fail(f"Value for '{field}' must have at least 1 item(s).")
        items = [str(item) for item in value]
        if unique and len(set(items)) != len(items):
            raise fail(f"Items for '{field}' must be unique")
        return items

    return Checked(check, documented={"minItems": 1, "uniqueItems": unique})


def one_of(
    allowed: Iterable[str],
    *,
    upper: bool = False,
    message: str | None = None,
    documented: Iterable[str] | None = None,
    required: bool = False,
) -> BeforeValidator:
    """A string that must be one of ``allowed`` (optionally compared in upper case).

    ``message`` may use ``{value}`` and ``{field}``; Senlin's enum text by default.
    ``documented``: the values ``/openapi.json`` lists, when a service refuses some of
    ``allowed`` later (a receiver of type ``message``); ``allowed`` by default.
    ``required``: null is documented as refused (the service refuses it with its own text).
    """
    choices = tuple(allowed)
    listed = tuple(documented) if documented is not None else choices
    schema: dict[str, Any] = (
        {"pattern": any_case(listed)}
        if upper
        else {"enum": [*listed, *([] if required else [None])]}
    )
    text = message or "Value '{value}' is not acceptable for field '{field}'."

    def check(value: object, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        chosen = value.upper() if upper and isinstance(value, str) else value
        if chosen not in choices:
            raise fail(text.format(value=value, field=info.field_name))
        return str(chosen)

    return Checked(check, documented=schema)


# -- parsing -------------------------------------------------------------------------------

_PRIORITY = {"extra_forbidden": 0, "missing": 1}


def _field(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc) or "body"


def _message(model: type[RequestModel], error: ErrorDetails) -> str:
    kind = error["type"]
    loc = tuple(error.get("loc", ()))
    name = str(loc[-1]) if loc else "body"
    context = error.get("ctx") or {}
    if kind == "senlin":
        return str(context["message"])
    if kind == "missing":
        if len(loc) == 1:
            return model.missing_key_message(name)
        return f"'{name}' is a required property"
    if kind in ("model_type", "dict_type", "model_attributes_type"):
        return f"The data provided for '{name}' is not a map"
    return f"Invalid value for '{_field(loc)}': {error.get('msg', 'invalid')}."


def _to_invalid(model: type[RequestModel], errors: list[ErrorDetails]) -> InvalidRequest:
    problems = sorted(errors, key=lambda e: _PRIORITY.get(e["type"], 2))
    first = problems[0]
    if first["type"] == "extra_forbidden":
        parent = tuple(first["loc"][:-1])
        extra = sorted(
            str(e["loc"][-1])
            for e in problems
            if e["type"] == "extra_forbidden" and tuple(e["loc"][:-1]) == parent
        )
        owner = model if not parent else RequestModel
        return InvalidRequest(owner.extra_keys_message(extra), field=_field((*parent, extra[0])))
    return InvalidRequest(_message(model, first), field=_field(tuple(first["loc"])))


def parse_body(
    model: type[Model],
    raw: object,
    *,
    envelope: str | None = None,
    label: str | None = None,
    ignore: Iterable[str] = (),
    context: Mapping[str, object] | None = None,
    request_object: bool = False,
) -> Model:
    """Validate a raw JSON body into ``model``; raise InvalidRequest with Senlin's texts.

    Args:
        model: The request model.
        raw: The decoded JSON body (anything).
        envelope: The wrapper key Senlin puts around the body (``{"cluster": {...}}``).
        label: The name a non-map body is reported under (a cluster action's name).
        ignore: Keys dropped before validation (fields an older microversion did not
            have, which Senlin ignores rather than rejects).
        context: Run-time values field types read (e.g. ``max_nodes_per_cluster``).
        request_object: Senlin read this body into one of its request objects (the creates
            and validates), whose missing envelope is "Request body missing 'x' key."; its
            updates looked for the envelope first: "Malformed request data, missing ...".
    """
    check_json(raw)
    data = raw
    if envelope is not None:
        if not isinstance(raw, Mapping) or raw.get(envelope) is None:
            message = (
                f"Request body missing '{envelope}' key."
                if request_object
                else f"Malformed request data, missing '{envelope}' key in request body."
            )
            raise InvalidRequest(message, field=envelope)
        data = raw[envelope]
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise InvalidRequest(model.not_a_map_message(label), field=envelope or label or "body")
    dropped = set(ignore)
    if dropped:
        data = {key: value for key, value in data.items() if key not in dropped}
    try:
        return model.model_validate(dict(data), context=dict(context or {}))
    except ValidationError as exc:
        raise _to_invalid(model, exc.errors()) from None


def check_given(
    model: type[RequestModel],
    raw: object,
    *,
    label: str | None = None,
    context: Mapping[str, object] | None = None,
) -> None:
    """Validate only the keys ``raw`` gives: like :func:`parse_body`, but a missing
    required key is no error.

    For parameters that are completed later, such as a receiver's stored ``params``,
    which each trigger of its webhook may complete before the whole is parsed.
    """
    if raw is None:
        return
    if not isinstance(raw, Mapping):
        raise InvalidRequest(model.not_a_map_message(label), field=label or "body")
    try:
        model.model_validate(dict(raw), context=dict(context or {}))
    except ValidationError as exc:
        # a key not given is no error, also when its default is checked (add_nodes' empty
        # list of nodes); a key given, or the model as a whole, is
        problems = [
            error
            for error in exc.errors()
            if error["type"] != "missing" and (not error["loc"] or error["loc"][0] in raw)
        ]
        if problems:
            raise _to_invalid(model, problems) from None


def all_request_models() -> list[type[RequestModel]]:
    """Every request model defined so far (for the OpenAPI components)."""
    found: list[type[RequestModel]] = []
    pending: list[type[RequestModel]] = list(RequestModel.__subclasses__())
    while pending:
        model = pending.pop()
        if model not in found:
            found.append(model)
            pending.extend(model.__subclasses__())
    return sorted(found, key=lambda m: m.__name__)
