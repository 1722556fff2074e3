"""``herd policy`` and ``herd policy-type``."""

from __future__ import annotations

from typing import Annotated

import typer

from herd.cli.client import path
from herd.cli.common import (
    LimitOption,
    MarkerOption,
    SortOption,
    SpecFileOption,
    get_state,
    list_params,
    load_spec,
)
from herd.cli.output import Column, id_column, print_json, print_message, print_record, print_table

app = typer.Typer(
    help="Policies: rules checked before and after cluster actions.", no_args_is_help=True
)
types_app = typer.Typer(help="Policy types the server knows.", no_args_is_help=True)

POLICY_COLUMNS = [
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
) -> None:
    """Create a policy from a spec file."""
    state = get_state(ctx)
    body = {"name": name, "spec": load_spec(spec_file)}
    reply = state.client.post(path("policies"), {"policy": body})
    _show(state.json, reply.body)


@app.command("list")
def list_(
    ctx: typer.Context,
    name: Annotated[str | None, typer.Option(help="Only policies with this name.")] = None,
    type_: Annotated[str | None, typer.Option("--type", help="Only this policy type.")] = None,
    limit: LimitOption = None,
    marker: MarkerOption = None,
    sort: SortOption = None,
) -> None:
    """List policies."""
    state = get_state(ctx)
    params = list_params(limit, marker, sort, name=name, type=type_)
    body = state.client.get(path("policies"), params).body
    if state.json:
        print_json(body)
    else:
        print_table(body.get("policies", []), POLICY_COLUMNS, full_id=state.full_id)


@app.command("show")
def show(ctx: typer.Context, policy: str) -> None:
    """Show one policy (by id, short id or name)."""
    state = get_state(ctx)
    _show(state.json, state.client.get(path("policies", policy)).body)


@app.command("update")
def update(
    ctx: typer.Context,
    policy: str,
    name: Annotated[str, typer.Option(help="The new name.")],
) -> None:
    """Rename a policy (the spec cannot change)."""
    state = get_state(ctx)
    body = {"name": name}
    reply = state.client.patch(path("policies", policy), {"policy": body})
    _show(state.json, reply.body)


@app.command("delete")
def delete(ctx: typer.Context, policies: list[str]) -> None:
    """Delete one or more policies."""
    state = get_state(ctx)
    for policy in policies:
        state.client.delete(path("policies", policy))
        if not state.json:
            print_message(f"Policy {policy} deleted.")
    if state.json:
        print_json({"deleted": policies})


@app.command("validate")
def validate(ctx: typer.Context, spec_file: SpecFileOption) -> None:
    """Check a spec without storing it."""
    state = get_state(ctx)
    reply = state.client.post(
        path("policies", "validate"), {"policy": {"spec": load_spec(spec_file)}}
    )
    _show(state.json, reply.body)


@types_app.command("list")
def type_list(ctx: typer.Context) -> None:
    """List policy types."""
    state = get_state(ctx)
    body = state.client.get(path("policy-types")).body
    if state.json:
        print_json(body)
    else:
        print_table(body.get("policy_types", []), TYPE_COLUMNS)


@types_app.command("show")
def type_show(ctx: typer.Context, type_name: str) -> None:
    """Show a policy type and its schema."""
    state = get_state(ctx)
    body = state.client.get(path("policy-types", type_name)).body
    if state.json:
        print_json(body)
    else:
        print_record(body.get("policy_type", body))


def _show(as_json: bool, body: dict[str, object]) -> None:
    if as_json:
        print_json(body)
    else:
        record = body.get("policy", body)
        print_record(record if isinstance(record, dict) else body)
