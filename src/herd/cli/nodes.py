"""``herd node``: nodes, their checks and recoveries, and marking them unhealthy."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated

import typer

from herd.cli.client import path
from herd.cli.clusters import delete_and_wait
from herd.cli.common import (
    DEFAULT_WAIT_TIMEOUT,
    LimitOption,
    MarkerOption,
    MetadataOption,
    SortOption,
    WaitOption,
    WaitTimeoutOption,
    get_state,
    list_params,
    parse_metadata,
    without_none,
)
from herd.cli.output import Column, id_column, print_json, print_record, print_table
from herd.cli.wait import finish

app = typer.Typer(help="Nodes: the members of clusters (or orphans).", no_args_is_help=True)


def health_text(row: Mapping[str, object]) -> str:
    """``health`` with its reason, e.g. ``CHECK_FAILED (process exited)``."""
    health = row.get("health") or ""
    reason = row.get("health_reason")
    return f"{health} ({reason})" if health and reason else str(health)


NODE_COLUMNS = [
    id_column(),
    Column("name", "name"),
    Column("index", "index"),
    Column("status", "status"),
    Column("health", health_text),
    id_column("cluster", "cluster_id"),
    id_column("physical_id", "physical_id"),
]


def print_nodes(body: dict[str, object], *, as_json: bool, full_id: bool) -> None:
    if as_json:
        print_json(body)
    else:
        print_table(body.get("nodes", []), NODE_COLUMNS, full_id=full_id)


@app.command("create")
def create(
    ctx: typer.Context,
    name: str,
    profile: Annotated[str, typer.Option("--profile", "-p", help="Profile id or name.")],
    cluster: Annotated[str | None, typer.Option(help="Join this cluster.")] = None,
    role: Annotated[str | None, typer.Option(help="The node's role in its cluster.")] = None,
    metadata: MetadataOption = None,
    wait: WaitOption = False,
    wait_timeout: WaitTimeoutOption = DEFAULT_WAIT_TIMEOUT,
) -> None:
    """Create a node, alone or in a cluster."""
    state = get_state(ctx)
    body = without_none(
        name=name,
        profile_id=profile,
        cluster_id=cluster,
        role=role,
        metadata=parse_metadata(metadata),
    )
    reply = state.client.post(path("nodes"), {"node": body})
    finish(state, reply, key="node", wait=wait, wait_timeout=wait_timeout)


@app.command("list")
def list_(
    ctx: typer.Context,
    cluster: Annotated[str | None, typer.Option(help="Only members of this cluster.")] = None,
    name: Annotated[str | None, typer.Option(help="Only nodes with this name.")] = None,
    status: Annotated[str | None, typer.Option(help="Only nodes in this status.")] = None,
    limit: LimitOption = None,
    marker: MarkerOption = None,
    sort: SortOption = None,
) -> None:
    """List nodes, with their health."""
    state = get_state(ctx)
    params = list_params(limit, marker, sort, cluster_id=cluster, name=name, status=status)
    body = state.client.get(path("nodes"), params).body
    print_nodes(body, as_json=state.json, full_id=state.full_id)


@app.command("show")
def show(ctx: typer.Context, node: str) -> None:
    """Show one node (by id, short id or name)."""
    state = get_state(ctx)
    body = state.client.get(path("nodes", node)).body
    if state.json:
        print_json(body)
    else:
        print_record(body.get("node", body))


@app.command("update")
def update(
    ctx: typer.Context,
    node: str,
    name: Annotated[str | None, typer.Option(help="The new name.")] = None,
    profile: Annotated[str | None, typer.Option("--profile", "-p", help="New profile.")] = None,
    role: Annotated[str | None, typer.Option(help="The new role.")] = None,
    tainted: Annotated[
        bool | None, typer.Option("--tainted/--untainted", help="Avoid this node.")
    ] = None,
    metadata: MetadataOption = None,
    wait: WaitOption = False,
    wait_timeout: WaitTimeoutOption = DEFAULT_WAIT_TIMEOUT,
) -> None:
    """Change a node's name, profile, role, taint or metadata."""
    state = get_state(ctx)
    body = without_none(
        name=name,
        profile_id=profile,
        role=role,
        tainted=tainted,
        metadata=parse_metadata(metadata),
    )
    reply = state.client.patch(path("nodes", node), {"node": body})
    finish(state, reply, key="node", wait=wait, wait_timeout=wait_timeout)


@app.command("delete")
def delete(
    ctx: typer.Context,
    nodes: list[str],
    force: Annotated[bool, typer.Option(help="Delete even if the node is busy.")] = False,
    wait: WaitOption = False,
    wait_timeout: WaitTimeoutOption = DEFAULT_WAIT_TIMEOUT,
) -> None:
    """Delete one or more nodes."""
    delete_and_wait(get_state(ctx), "nodes", nodes, force, wait, wait_timeout)


@app.command("check")
def check(
    ctx: typer.Context,
    node: str,
    wait: WaitOption = False,
    wait_timeout: WaitTimeoutOption = DEFAULT_WAIT_TIMEOUT,
) -> None:
    """Check a node's health."""
    state = get_state(ctx)
    reply = state.client.node_action(node, "check", {})
    finish(state, reply, wait=wait, wait_timeout=wait_timeout)


@app.command("recover")
def recover(
    ctx: typer.Context,
    node: str,
    operation: Annotated[
        str | None, typer.Option(help="How to recover, e.g. RECREATE or REBOOT.")
    ] = None,
    check: Annotated[bool, typer.Option("--check", help="Check before recovering.")] = False,
    wait: WaitOption = False,
    wait_timeout: WaitTimeoutOption = DEFAULT_WAIT_TIMEOUT,
) -> None:
    """Recover a node."""
    state = get_state(ctx)
    params = without_none(operation=operation, check=True if check else None)
    reply = state.client.node_action(node, "recover", params)
    finish(state, reply, wait=wait, wait_timeout=wait_timeout)


@app.command("mark-unhealthy")
def mark_unhealthy(
    ctx: typer.Context,
    cluster: str,
    node: str,
    reason: Annotated[str | None, typer.Option(help="Why (kept with the mark).")] = None,
    reset: Annotated[bool, typer.Option("--reset", help="Mark it healthy again.")] = False,
) -> None:
    """Mark a cluster member unhealthy (or healthy again with --reset)."""
    state = get_state(ctx)
    body: dict[str, object] = {"mark_unhealthy": not reset}
    if reason is not None:
        body["resource_status_reason"] = reason
    reply = state.client.patch(path("clusters", cluster, "nodes", node), body)
    if state.json:
        print_json(reply.body)
    else:
        print_record(reply.body.get("node", reply.body))
