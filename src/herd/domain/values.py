"""The one way herd reads booleans and integers that arrive as text.

Senlin's request fields (oslo.versionedobjects) accept a boolean as any of
the words below and an integer as anything ``int()`` takes, but not a bool
and not a float with a fraction. Request bodies, query strings, policy specs
and node metadata (``protected``) all read them here, so ``"y"`` means the
same thing everywhere.
"""

from __future__ import annotations

from herd.errors import InvalidRequest

#: the longest duration (seconds) any request or spec may ask for: timeouts, grace periods,
#: hook waits, cooldowns, health intervals. A week; beyond it a value is a mistake or an
#: attack (1e30 used to make a scale-in wait for ever).
MAX_DURATION = 7 * 86400

BOOL_TRUE = ("1", "t", "true", "on", "y", "yes")
BOOL_FALSE = ("0", "f", "false", "off", "n", "no")
BOOL_ACCEPTED = ", ".join(f"'{word}'" for word in sorted(BOOL_TRUE + BOOL_FALSE))


def parse_bool(value: object) -> bool | None:
    """``value`` as a boolean, or None when it is not one of the accepted words."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | str):
        text = str(value).strip().lower()
        if text in BOOL_TRUE:
            return True
        if text in BOOL_FALSE:
            return False
    return None


def bool_error(value: object) -> str:
    """Senlin's text for a value that is not a boolean."""
    return f"Unrecognized value '{value}', acceptable values are: {BOOL_ACCEPTED}"


def to_bool(value: object, field: str) -> bool:
    """``value`` as a boolean; raise InvalidRequest naming ``field`` otherwise."""
    parsed = parse_bool(value)
    if parsed is None:
        raise InvalidRequest(bool_error(value), field=field)
    return parsed


def parse_int(value: object) -> int | None:
    """``value`` as an integer with Senlin's coercion, or None when it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    if isinstance(value, int):
        return value
    if isinstance(value, str | bytes):
        try:
            return int(value)
        except ValueError:
            return None
    return None


def int_error(field: str, value: object) -> str:
    """Senlin's text for a value that is not an integer."""
    return f"The value for {field} must be an integer: '{value}'."


def to_int(value: object, field: str) -> int:
    """``value`` as an integer; raise InvalidRequest naming ``field`` otherwise."""
    parsed = parse_int(value)
    if parsed is None:
        raise InvalidRequest(int_error(field, value), field=field)
    return parsed
