"""docs/configuration.md lists every setting, with the default the code has."""

from __future__ import annotations

import re
from pathlib import Path

from herd.config import Settings

DOC = Path(__file__).parents[2] / "docs" / "configuration.md"
ROW = re.compile(r"^\| `(?P<name>[a-z_]+)` \| (?P<default>[^|]+) \|", re.MULTILINE)


def documented() -> dict[str, str]:
    return {m["name"]: m["default"].strip() for m in ROW.finditer(DOC.read_text())}


def shown(value: object) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, list) and not value:
        return "`[]`"
    return f"`{value}`"


def test_every_setting_is_documented_and_nothing_else() -> None:
    assert set(documented()) == set(Settings.model_fields)


def test_the_documented_defaults_are_the_code_s() -> None:
    rows = documented()
    for name, field in Settings.model_fields.items():
        default = field.default_factory() if field.default_factory else field.default  # type: ignore[call-arg]
        assert rows[name] == shown(default), name
