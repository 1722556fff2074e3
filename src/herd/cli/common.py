"""What every client command shares: the invocation state and input parsing."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import typer
import yaml

from herd.cli.client import DEFAULT_URL, HerdClient, JSONObject, QueryValue


class CommandFailed(Exception):
    """A command that cannot go on; the root group prints it and exits non-zero."""

    def __init__(self, message: str, *, exit_code: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


@dataclass
class CliState:
    """The global options, and the client built from them on first use."""

    url: str = DEFAULT_URL
    token: str | None = None
    json: bool = False
    full_id: bool = False
    _client: HerdClient | None = field(default=None, repr=False)

    @property
    def client(self) -> HerdClient:
        if self._client is None:
            self._client = HerdClient(self.url, self.token)
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


def get_state(ctx: typer.Context) -> CliState:
    state = ctx.find_object(CliState)
    if state is None:  # a sub-app run on its own (tests); use the defaults
        state = ctx.ensure_object(CliState)
    return state


def parse_metadata(items: list[str] | None) -> JSONObject | None:
    """``["k=v", ...]`` to a dict; None when nothing was given."""
    if not items:
        return None
    result: JSONObject = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise CommandFailed(f"metadata must be KEY=VALUE, got {item!r}")
        result[key] = value
    return result


def parse_pairs(items: list[str], what: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for item in items:
        old, sep, new = item.partition("=")
        if not sep or not old or not new:
            raise CommandFailed(f"{what} must be OLD=NEW, got {item!r}")
        pairs[old] = new
    return pairs


def load_spec(spec_file: Path) -> JSONObject:
    """Read a spec from a YAML or JSON file (JSON is YAML too; .json gets JSON errors)."""
    try:
        text = spec_file.read_text(encoding="utf-8")
    except OSError as exc:
        raise CommandFailed(f"cannot read spec file {spec_file}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise CommandFailed(
            f"spec file {spec_file} is not UTF-8 text (byte {exc.start}: {exc.reason})"
        ) from None
    try:
        data: object = json.loads(text) if spec_file.suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise CommandFailed(f"spec file {spec_file} is not valid: {exc}") from exc
    if not isinstance(data, dict):
        raise CommandFailed(f"spec file {spec_file} must hold a mapping")
    return data


def without_none(**values: object) -> JSONObject:
    return {key: value for key, value in values.items() if value is not None}


def list_params(
    limit: int | None, marker: str | None, sort: str | None, **filters: QueryValue
) -> dict[str, QueryValue]:
    given: dict[str, QueryValue] = {"limit": limit, "marker": marker, "sort": sort, **filters}
    return {key: value for key, value in given.items() if value is not None}


# Option types shared by the command modules.
WaitOption = Annotated[
    bool, typer.Option("--wait", help="Follow the action until it ends; exit 0 only on success.")
]
WaitTimeoutOption = Annotated[
    float, typer.Option("--wait-timeout", help="Seconds to wait before giving up (exit 3).")
]
LimitOption = Annotated[int | None, typer.Option("--limit", help="At most this many rows.")]
MarkerOption = Annotated[
    str | None, typer.Option("--marker", help="Start after this id (pagination).")
]
SortOption = Annotated[
    str | None, typer.Option("--sort", help="Sort keys and directions, e.g. name:asc.")
]
MetadataOption = Annotated[
    list[str] | None,
    typer.Option("--metadata", "-m", help="KEY=VALUE; repeat for several."),
]
SpecFileOption = Annotated[
    Path,
    typer.Option("--spec-file", "-s", help="The spec, as a YAML or JSON file."),
]
DEFAULT_WAIT_TIMEOUT = 3600.0
