"""``herd cluster`` create, list, show, update, delete.

The operations on a cluster (scale, resize, policies, lifecycle...) live in
:mod:`herd.cli.cluster_actions`, which adds them to the same ``app``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated

import typer

from herd.cli.client import path
from herd.cli.common import (
    DEFAULT_WAIT_TIMEOUT,
    CliState,
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
from herd.cli.output import (
    Column,
    id_column,
    print_json,
    print_message,
    print_record,
    print_table,
    time_column,
)
from herd.cli.wait import finish, wait_for_action

app = typer.Typer(help="Clusters: groups of nodes kept at a desired size.", no_args_is_help=True)


def _node_count(row: Mapping[str, object]) -> int:
    nodes = row.get("nodes")
    return len(nodes) if isinstance(nodes, list) else 0


CLUSTER_COLUMNS = [
    id_column(),
    Column("name", "name"),
    Column("status", "status"),
    Column("desired", "desired_capacity"),
    Column("min", "min_size"),
    Column("max", "max_size"),
    Column("nodes", _node_count),
    Column("profile", lambda row: row.get("profile_name") or row.get("profile_id")),
    time_column("created_at"),
]


@app.command("create")
def create(
    ctx: typer.Context,
    name: str,
    profile: Annotated[str, typer.Option("--profile", "-p", help="Profile id or name.")],
    desired_capacity: Annotated[
        int | None, typer.Option("--desired-capacity", "-c", help="Nodes to start with.")
    ] = None,
    min_size: Annotated[int | None, typer.Option(help="Fewest nodes allowed.")] = None,
    max_size: Annotated[int | None, typer.Option(help="Most nodes allowed (-1: no limit).")] = None,
    timeout: Annotated[int | None, typer.Option(help="Action timeout in seconds.")] = None,
    metadata: MetadataOption = None,
    wait: WaitOption = False,
    wait_timeout: WaitTimeoutOption = DEFAULT_WAIT_TIMEOUT,
) -> None:
    """Create a cluster."""
    state = get_state(ctx)
    body = without_none(
        name=name,
        profile_id=profile,
        desired_capacity=desired_capacity,
        min_size=min_size,
        max_size=max_size,
        timeout=timeout,
        metadata=parse_metadata(metadata),
    )
    reply = state.client.post(path("clusters"), {"cluster": body})
    finish(state, reply, key="cluster", wait=wait, wait_timeout=wait_timeout)


@app.command("list")
def list_(
    ctx: typer.Context,
    name: Annotated[str | None, typer.Option(help="Only clusters with this name.")] = None,
    status: Annotated[str | None, typer.Option(help="Only clusters in this status.")] = None,
    limit: LimitOption = None,
    marker: MarkerOption = None,
    sort: SortOption = None,
) -> None:
    """List clusters."""
    state = get_state(ctx)
    params = list_params(limit, marker, sort, name=name, status=status)
    body = state.client.get(path("clusters"), params).body
    if state.json:
        print_json(body)
    else:
        print_table(body.get("clusters", []), CLUSTER_COLUMNS, full_id=state.full_id)


@app.command("show")
def show(ctx: typer.Context, cluster: str) -> None:
    """Show one cluster (by id, short id or name)."""
    state = get_state(ctx)
    body = state.client.get(path("clusters", cluster)).body
    if state.json:
        print_json(body)
    else:
        print_record(body.get("cluster", body))


@app.command("update")
def update(
    ctx: typer.Context,
    cluster: str,
    name: Annotated[str | None, typer.Option(help="The new name.")] = None,
    profile: Annotated[
        str | None, typer.Option("--profile", "-p", help="Move the nodes to this profile.")
    ] = None,
    profile_only: Annotated[
        bool | None,
        typer.Option("--profile-only/--all-nodes", help="Change the profile for new nodes only."),
    ] = None,
    timeout: Annotated[int | None, typer.Option(help="Action timeout in seconds.")] = None,
    metadata: MetadataOption = None,
    wait: WaitOption = False,
    wait_timeout: WaitTimeoutOption = DEFAULT_WAIT_TIMEOUT,
) -> None:
    """Change a cluster's name, profile, timeout or metadata."""
    state = get_state(ctx)
    body = without_none(
        name=name,
        profile_id=profile,
        profile_only=profile_only,
        timeout=timeout,
        metadata=parse_metadata(metadata),
    )
    reply = state.client.patch(path("clusters", cluster), {"cluster": body})
    finish(state, reply, key="cluster", wait=wait, wait_timeout=wait_timeout)


@app.command("delete")
def delete(
    ctx: typer.Context,
    clusters: list[str],
    force: Annotated[bool, typer.Option(help="Delete even if the cluster is busy.")] = False,
    wait: WaitOption = False,
    wait_timeout: WaitTimeoutOption = DEFAULT_WAIT_TIMEOUT,
) -> None:
    """Delete one or more clusters (and their nodes)."""
    state = get_state(ctx)
    delete_and_wait(state, "clusters", clusters, force, wait, wait_timeout)


def delete_and_wait(
    state: CliState, collection: str, targets: list[str], force: bool, wait: bool, timeout: float
) -> None:
    """DELETE each target (202 + action, or 204 when already being deleted), then wait."""
    kind = collection[:-1].capitalize()
    pending: list[tuple[str, str]] = []
    answers: list[dict[str, object]] = []
    for target in targets:
        reply = state.client.delete(path(collection, target), {"force": True} if force else None)
        action_id = reply.action_id
        answers.append({"id": target, "status": reply.status, "action": action_id})
        if action_id:
            pending.append((target, action_id))
            if not state.json:
                print_message(f"{kind} {target}: deletion accepted (action {action_id}).")
        elif not state.json:
            print_message(f"{kind} {target}: deletion already in progress.")
    if state.json:
        print_json(answers)
    if not wait:
        return
    for target, action_id in pending:
        wait_for_action(state.client, action_id, timeout=timeout)
        if not state.json:
            print_message(f"{kind} {target} deleted.")
