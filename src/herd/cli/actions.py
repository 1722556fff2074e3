"""``herd action``: list, show and cancel actions."""

from __future__ import annotations

from typing import Annotated

import typer

from herd.cli.client import path
from herd.cli.common import (
    LimitOption,
    MarkerOption,
    SortOption,
    get_state,
    list_params,
)
from herd.cli.output import (
    Column,
    id_column,
    print_json,
    print_message,
    print_record,
    print_table,
    time_column,
)

app = typer.Typer(help="Actions: the asynchronous work of the engine.", no_args_is_help=True)

ACTION_COLUMNS = [
    id_column(),
    Column("name", "name"),
    Column("action", "action"),
    Column("status", "status"),
    id_column("target", "target"),
    id_column("cluster", "cluster_id"),
    time_column("created_at"),
]


@app.command("list")
def list_(
    ctx: typer.Context,
    cluster: Annotated[str | None, typer.Option(help="Only actions on this cluster.")] = None,
    status: Annotated[str | None, typer.Option(help="Only actions in this status.")] = None,
    action: Annotated[
        str | None, typer.Option("--action", help="Only this kind, e.g. CLUSTER_SCALE_IN.")
    ] = None,
    target: Annotated[str | None, typer.Option(help="Only actions on this target id.")] = None,
    limit: LimitOption = None,
    marker: MarkerOption = None,
    sort: SortOption = None,
) -> None:
    """List actions."""
    state = get_state(ctx)
    params = list_params(
        limit, marker, sort, cluster_id=cluster, status=status, action=action, target=target
    )
    body = state.client.get(path("actions"), params).body
    if state.json:
        print_json(body)
    else:
        print_table(body.get("actions", []), ACTION_COLUMNS, full_id=state.full_id)


@app.command("show")
def show(ctx: typer.Context, action: str) -> None:
    """Show one action with its inputs, outputs and dependencies."""
    state = get_state(ctx)
    body = state.client.get(path("actions", action)).body
    if state.json:
        print_json(body)
    else:
        print_record(body.get("action", body))


@app.command("cancel")
def cancel(
    ctx: typer.Context,
    action: str,
    force: Annotated[bool, typer.Option(help="Cancel even if it is running.")] = False,
) -> None:
    """Cancel an action."""
    state = get_state(ctx)
    reply = state.client.patch(
        path("actions", action),
        {"action": {"status": "CANCELLED"}},
        {"force": True} if force else None,
    )
    if state.json:
        print_json(reply.body or {"action": action, "status": "CANCELLED"})
    else:
        print_message(f"Action {action}: cancel requested.")
