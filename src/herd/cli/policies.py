"""``herd policy`` and ``herd policy-type`` (the shared commands: cli/spec_commands.py)."""

from __future__ import annotations

from typing import Annotated

import typer

from herd.cli.client import path
from herd.cli.common import SpecFileOption, get_state, load_spec
from herd.cli.spec_commands import add_spec_commands

app = typer.Typer(
    help="Policies: rules checked before and after cluster actions.", no_args_is_help=True
)
types_app = typer.Typer(help="Policy types the server knows.", no_args_is_help=True)
_show = add_spec_commands(app, types_app, kind="policy", plural="policies")


@app.command("create")
def create(ctx: typer.Context, name: str, spec_file: SpecFileOption) -> None:
    """Create a policy from a spec file."""
    state = get_state(ctx)
    reply = state.client.post(
        path("policies"), {"policy": {"name": name, "spec": load_spec(spec_file)}}
    )
    _show(state.json, reply.body)


@app.command("update")
def update(
    ctx: typer.Context,
    policy: str,
    name: Annotated[str, typer.Option(help="The new name.")],
) -> None:
    """Rename a policy (the spec cannot change)."""
    state = get_state(ctx)
    reply = state.client.patch(path("policies", policy), {"policy": {"name": name}})
    _show(state.json, reply.body)
