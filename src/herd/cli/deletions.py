"""``herd deletions``: resources being deleted (tombstones), for admins."""

from __future__ import annotations

from typing import Annotated

import typer

from herd.cli.client import path
from herd.cli.common import DEFAULT_WAIT_TIMEOUT, WaitOption, WaitTimeoutOption, get_state
from herd.cli.output import Column, id_column, print_json, print_table, time_column
from herd.cli.wait import finish

app = typer.Typer(help="Deletions in progress (tombstones); admin only.", no_args_is_help=True)


def format_age(seconds: object) -> str:
    """``3725`` -> ``1h02m05s``; anything that is not a number is shown as it is."""
    if not isinstance(seconds, int | float) or isinstance(seconds, bool):
        return "" if seconds is None else str(seconds)
    total = int(seconds)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m{secs:02d}s"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


DELETION_COLUMNS = [
    Column("type", "resource_type"),
    id_column("resource_id", "resource_id"),
    Column("status", "status"),
    Column("age", lambda row: format_age(row.get("age"))),
    time_column("deleted_at"),
    Column("reason", "reason"),
    id_column("action", "action_id"),
    Column("requested_by", "requested_by"),
]


@app.command("list")
def list_(ctx: typer.Context) -> None:
    """List the resources being deleted, with their age and state."""
    state = get_state(ctx)
    body = state.client.get(path("deletions")).body
    if state.json:
        print_json(body)
    else:
        print_table(body.get("deletions", []), DELETION_COLUMNS, full_id=state.full_id)


@app.command("purge")
def purge(
    ctx: typer.Context,
    resource_type: Annotated[str, typer.Argument(help="cluster, node, profile or policy.")],
    resource_id: str,
    force: Annotated[
        bool, typer.Option(help="Clear a deletion stuck longer than deletion_stuck_after.")
    ] = False,
    wait: WaitOption = False,
    wait_timeout: WaitTimeoutOption = DEFAULT_WAIT_TIMEOUT,
) -> None:
    """Clear a stuck deletion: a DELETION_PURGE action cleans what can be cleaned."""
    state = get_state(ctx)
    reply = state.client.delete(
        path("deletions", resource_type, resource_id), params={"force": True} if force else None
    )
    finish(state, reply, key="deletion", wait=wait, wait_timeout=wait_timeout)
