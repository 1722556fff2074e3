"""``herd profile`` and ``herd profile-type`` (the shared commands: cli/spec_commands.py)."""

from __future__ import annotations

from typing import Annotated

import typer

from herd.cli.client import path
from herd.cli.common import (
    MetadataOption,
    SpecFileOption,
    get_state,
    load_spec,
    parse_metadata,
    without_none,
)
from herd.cli.spec_commands import add_spec_commands

app = typer.Typer(help="Profiles: what a node is made of.", no_args_is_help=True)
types_app = typer.Typer(help="Profile types the server knows.", no_args_is_help=True)
_show = add_spec_commands(app, types_app, kind="profile", plural="profiles")


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
