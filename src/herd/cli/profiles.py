"""``herd profile`` and ``herd profile-type``."""

from __future__ import annotations

from typing import Annotated

import typer

from herd.cli.client import path
from herd.cli.common import (
    LimitOption,
    MarkerOption,
    MetadataOption,
    SortOption,
    SpecFileOption,
    get_state,
    list_params,
    load_spec,
    parse_metadata,
    without_none,
)
from herd.cli.output import Column, id_column, print_json, print_message, print_record, print_table

app = typer.Typer(help="Profiles: what a node is made of.", no_args_is_help=True)
types_app = typer.Typer(help="Profile types the server knows.", no_args_is_help=True)

PROFILE_COLUMNS = [
    id_column(),
    Column("name", "name"),
    Column("type", "type"),
    Column("created_at", "created_at"),
]
TYPE_COLUMNS = [Column("name", "name"), Column("version", "version")]


@app.command("create")
def create(
    ctx: typer.Context,
    name: str,
    spec_file: SpecFileOption,
    metadata: MetadataOption = None,
) -> None:
    """Create a profile from a spec file."""
    state = get_state(ctx)
    body = without_none(name=name, spec=load_spec(spec_file), metadata=parse_metadata(metadata))
    reply = state.client.post(path("profiles"), {"profile": body})
    _show(state.json, reply.body)


@app.command("list")
def list_(
    ctx: typer.Context,
    name: Annotated[str | None, typer.Option(help="Only profiles with this name.")] = None,
    type_: Annotated[str | None, typer.Option("--type", help="Only this profile type.")] = None,
    limit: LimitOption = None,
    marker: MarkerOption = None,
    sort: SortOption = None,
) -> None:
    """List profiles."""
    state = get_state(ctx)
    params = list_params(limit, marker, sort, name=name, type=type_)
    body = state.client.get(path("profiles"), params).body
    if state.json:
        print_json(body)
    else:
        print_table(body.get("profiles", []), PROFILE_COLUMNS, full_id=state.full_id)


@app.command("show")
def show(ctx: typer.Context, profile: str) -> None:
    """Show one profile (by id, short id or name)."""
    state = get_state(ctx)
    _show(state.json, state.client.get(path("profiles", profile)).body)


@app.command("update")
def update(
    ctx: typer.Context,
    profile: str,
    name: Annotated[str | None, typer.Option(help="The new name.")] = None,
    metadata: MetadataOption = None,
) -> None:
    """Rename a profile or replace its metadata (the spec cannot change)."""
    state = get_state(ctx)
    body = without_none(name=name, metadata=parse_metadata(metadata))
    reply = state.client.patch(path("profiles", profile), {"profile": body})
    _show(state.json, reply.body)


@app.command("delete")
def delete(ctx: typer.Context, profiles: list[str]) -> None:
    """Delete one or more profiles."""
    state = get_state(ctx)
    for profile in profiles:
        state.client.delete(path("profiles", profile))
        if not state.json:
            print_message(f"Profile {profile} deleted.")
    if state.json:
        print_json({"deleted": profiles})


@app.command("validate")
def validate(ctx: typer.Context, spec_file: SpecFileOption) -> None:
    """Check a spec without storing it."""
    state = get_state(ctx)
    reply = state.client.post(
        path("profiles", "validate"), {"profile": {"spec": load_spec(spec_file)}}
    )
    _show(state.json, reply.body)


@types_app.command("list")
def type_list(ctx: typer.Context) -> None:
    """List profile types."""
    state = get_state(ctx)
    body = state.client.get(path("profile-types")).body
    if state.json:
        print_json(body)
    else:
        print_table(body.get("profile_types", []), TYPE_COLUMNS)


@types_app.command("show")
def type_show(ctx: typer.Context, type_name: str) -> None:
    """Show a profile type and its schema."""
    state = get_state(ctx)
    body = state.client.get(path("profile-types", type_name)).body
    if state.json:
        print_json(body)
    else:
        print_record(body.get("profile_type", body))


def _show(as_json: bool, body: dict[str, object]) -> None:
    if as_json:
        print_json(body)
    else:
        record = body.get("profile", body)
        print_record(record if isinstance(record, dict) else body)
