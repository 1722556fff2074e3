"""Operations on a cluster: ``POST /v1/clusters/<id>/actions`` and friends.

The commands join ``herd cluster`` (the ``app`` of :mod:`herd.cli.clusters`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Literal

import typer

from herd.cli.client import path
from herd.cli.clusters import app
from herd.cli.common import (
    DEFAULT_WAIT_TIMEOUT,
    CliState,
    CommandFailed,
    WaitOption,
    WaitTimeoutOption,
    get_state,
    parse_pairs,
    without_none,
)
from herd.cli.nodes import NODE_COLUMNS
from herd.cli.output import Column, id_column, print_json, print_message, print_table, time_column
from herd.cli.wait import finish
from herd.json_types import list_at, object_at

__all__ = ["app"]

CountOption = Annotated[int | None, typer.Option("--count", "-n", help="How many nodes.")]
SeedOption = Annotated[
    int | None,
    typer.Option(help="Seed of the random choices (a preview prints the one it used)."),
]

CLUSTER_POLICY_COLUMNS = [
    id_column("policy_id", "policy_id"),
    Column("name", "policy_name"),
    Column("type", "policy_type"),
    Column("enabled", "enabled"),
    Column("priority", lambda row: row.get("priority", object_at(row, "data").get("priority"))),
]
MEMBER_COLUMNS = [*NODE_COLUMNS, time_column("marked_at", "health_marked_at")]


def _run(
    ctx: typer.Context,
    cluster: str,
    name: str,
    params: Mapping[str, object],
    wait: bool,
    timeout: float,
) -> None:
    state = get_state(ctx)
    reply = state.client.cluster_action(cluster, name, params)
    finish(state, reply, wait=wait, wait_timeout=timeout)


@app.command("scale-out")
def scale_out(
    ctx: typer.Context,
    cluster: str,
    count: CountOption = None,
    wait: WaitOption = False,
    wait_timeout: WaitTimeoutOption = DEFAULT_WAIT_TIMEOUT,
) -> None:
    """Add nodes (default: 1, or what the scaling policy says)."""
    _run(ctx, cluster, "scale_out", without_none(count=count), wait, wait_timeout)


@app.command("scale-in")
def scale_in(
    ctx: typer.Context,
    cluster: str,
    count: CountOption = None,
    seed: SeedOption = None,
    wait: WaitOption = False,
    wait_timeout: WaitTimeoutOption = DEFAULT_WAIT_TIMEOUT,
) -> None:
    """Remove nodes, chosen by the deletion policy (or broken first, then random)."""
    _run(ctx, cluster, "scale_in", without_none(count=count, seed=seed), wait, wait_timeout)


@app.command("resize")
def resize(
    ctx: typer.Context,
    cluster: str,
    capacity: Annotated[int | None, typer.Option(help="Exact number of nodes.")] = None,
    adjustment: Annotated[int | None, typer.Option(help="Nodes to add (or remove if < 0).")] = None,
    percentage: Annotated[
        float | None, typer.Option(help="Change in percent of the current size.")
    ] = None,
    min_step: Annotated[int | None, typer.Option(help="Least change for --percentage.")] = None,
    min_size: Annotated[int | None, typer.Option(help="New minimum size.")] = None,
    max_size: Annotated[int | None, typer.Option(help="New maximum size (-1: none).")] = None,
    strict: Annotated[
        bool | None, typer.Option("--strict/--no-strict", help="Fail instead of truncating.")
    ] = None,
    wait: WaitOption = False,
    wait_timeout: WaitTimeoutOption = DEFAULT_WAIT_TIMEOUT,
) -> None:
    """Resize a cluster: one of --capacity, --adjustment, --percentage, and/or new limits."""
    given = [
        (kind, number)
        for kind, number in (
            ("EXACT_CAPACITY", capacity),
            ("CHANGE_IN_CAPACITY", adjustment),
            ("CHANGE_IN_PERCENTAGE", percentage),
        )
        if number is not None
    ]
    if len(given) > 1:
        raise CommandFailed("give only one of --capacity, --adjustment and --percentage")
    if min_step is not None and percentage is None:
        raise CommandFailed("--min-step only applies with --percentage")
    params = without_none(min_step=min_step, min_size=min_size, max_size=max_size, strict=strict)
    if given:
        params["adjustment_type"], params["number"] = given[0]
    if not params:
        raise CommandFailed("nothing to resize: give a size change or new limits")
    _run(ctx, cluster, "resize", params, wait, wait_timeout)


@app.command("add-nodes")
def add_nodes(
    ctx: typer.Context,
    cluster: str,
    nodes: list[str],
    wait: WaitOption = False,
    wait_timeout: WaitTimeoutOption = DEFAULT_WAIT_TIMEOUT,
) -> None:
    """Add existing orphan nodes to a cluster."""
    _run(ctx, cluster, "add_nodes", {"nodes": nodes}, wait, wait_timeout)


@app.command("del-nodes")
def del_nodes(
    ctx: typer.Context,
    cluster: str,
    nodes: list[str],
    destroy_after_deletion: Annotated[
        bool, typer.Option("--destroy-after-deletion", help="Destroy them, not just remove.")
    ] = False,
    wait: WaitOption = False,
    wait_timeout: WaitTimeoutOption = DEFAULT_WAIT_TIMEOUT,
) -> None:
    """Remove named nodes from a cluster."""
    params = {"nodes": nodes, "destroy_after_deletion": destroy_after_deletion}
    _run(ctx, cluster, "del_nodes", params, wait, wait_timeout)


@app.command("replace-nodes")
def replace_nodes(
    ctx: typer.Context,
    cluster: str,
    pairs: Annotated[list[str], typer.Argument(help="OLD=NEW node pairs.")],
    wait: WaitOption = False,
    wait_timeout: WaitTimeoutOption = DEFAULT_WAIT_TIMEOUT,
) -> None:
    """Replace members with orphan nodes."""
    params = {"nodes": parse_pairs(pairs, "replacement")}
    _run(ctx, cluster, "replace_nodes", params, wait, wait_timeout)


@app.command("check")
def check(
    ctx: typer.Context,
    cluster: str,
    wait: WaitOption = False,
    wait_timeout: WaitTimeoutOption = DEFAULT_WAIT_TIMEOUT,
) -> None:
    """Check the health of every member."""
    _run(ctx, cluster, "check", {}, wait, wait_timeout)


@app.command("recover")
def recover(
    ctx: typer.Context,
    cluster: str,
    operation: Annotated[str | None, typer.Option(help="e.g. RECREATE or REBOOT.")] = None,
    check: Annotated[bool, typer.Option("--check", help="Check before recovering.")] = False,
    wait: WaitOption = False,
    wait_timeout: WaitTimeoutOption = DEFAULT_WAIT_TIMEOUT,
) -> None:
    """Recover the members that need it."""
    params = without_none(operation=operation, check=True if check else None)
    _run(ctx, cluster, "recover", params, wait, wait_timeout)


@app.command("replace-unhealthy")
def replace_unhealthy(
    ctx: typer.Context,
    cluster: str,
    batch_size: Annotated[int | None, typer.Option(help="Members replaced at a time.")] = None,
    wait: WaitOption = False,
    wait_timeout: WaitTimeoutOption = DEFAULT_WAIT_TIMEOUT,
) -> None:
    """Replace every CHECK_FAILED member by a new node with the same name and index."""
    params = without_none(batch_size=batch_size)
    _run(ctx, cluster, "replace_unhealthy", params, wait, wait_timeout)


@app.command("policy-attach")
def policy_attach(
    ctx: typer.Context,
    cluster: str,
    policy: str,
    disabled: Annotated[bool, typer.Option("--disabled", help="Attach it disabled.")] = False,
    wait: WaitOption = False,
    wait_timeout: WaitTimeoutOption = DEFAULT_WAIT_TIMEOUT,
) -> None:
    """Attach a policy to a cluster."""
    params = {"policy_id": policy, "enabled": not disabled}
    _run(ctx, cluster, "policy_attach", params, wait, wait_timeout)


@app.command("policy-detach")
def policy_detach(
    ctx: typer.Context,
    cluster: str,
    policy: str,
    wait: WaitOption = False,
    wait_timeout: WaitTimeoutOption = DEFAULT_WAIT_TIMEOUT,
) -> None:
    """Detach a policy from a cluster."""
    _run(ctx, cluster, "policy_detach", {"policy_id": policy}, wait, wait_timeout)


@app.command("policy-update")
def policy_update(
    ctx: typer.Context,
    cluster: str,
    policy: str,
    enabled: Annotated[
        bool | None, typer.Option("--enabled/--disabled", help="Turn the binding on or off.")
    ] = None,
    wait: WaitOption = False,
    wait_timeout: WaitTimeoutOption = DEFAULT_WAIT_TIMEOUT,
) -> None:
    """Enable or disable an attached policy."""
    if enabled is None:
        raise CommandFailed("give --enabled or --disabled")
    params = {"policy_id": policy, "enabled": enabled}
    _run(ctx, cluster, "policy_update", params, wait, wait_timeout)


@app.command("policy-list")
def policy_list(ctx: typer.Context, cluster: str) -> None:
    """List the policies attached to a cluster."""
    state = get_state(ctx)
    body = state.client.get(path("clusters", cluster, "policies")).body
    if state.json:
        print_json(body)
    else:
        rows = body.get("cluster_policies", [])
        print_table(rows, CLUSTER_POLICY_COLUMNS, full_id=state.full_id)


@app.command("members")
def members(ctx: typer.Context, cluster: str) -> None:
    """List a cluster's members with their health, in index order."""
    state = get_state(ctx)
    # Members made in one batch share init_at (the API's default order): index is stable.
    body = state.client.get(path("nodes"), {"cluster_id": cluster, "sort": "index"}).body
    if state.json:
        print_json(body)
    else:
        print_table(body.get("nodes", []), MEMBER_COLUMNS, full_id=state.full_id)


@app.command("preview-scale-in")
def preview_scale_in(
    ctx: typer.Context, cluster: str, count: CountOption = None, seed: SeedOption = None
) -> None:
    """Show which nodes a scale-in would remove now, in order, and why (changes nothing)."""
    state = get_state(ctx)
    params = without_none(count=count, seed=seed)
    body = state.client.cluster_action(cluster, "preview_scale_in", params).body
    if state.json:
        print_json(body)
        return
    victims = [v for v in list_at(body, "victims") if isinstance(v, Mapping)]
    rows = [{**victim, "#": position} for position, victim in enumerate(victims, 1)]
    print_table(rows, _victim_columns(victims), full_id=state.full_id)
    if body.get("seed") is not None:
        again = f" --count {count}" if count is not None else ""
        print_message(
            f"Seed {body['seed']}: 'herd cluster scale-in {cluster}{again} --seed {body['seed']}' "
            "removes exactly these while the cluster does not change."
        )


def _victim_columns(victims: list[Mapping[str, object]]) -> list[Column]:
    columns = [id_column("node_id", "node_id"), Column("name", "name"), Column("rule", "rule")]
    known = {"node_id", "name", "rule"}
    for victim in victims:
        for key in victim:
            if key not in known:
                known.add(key)
                columns.append(Column(key, key))
    return [Column("#", "#"), *columns]


@app.command("complete-lifecycle")
def complete_lifecycle(
    ctx: typer.Context,
    cluster: str,
    token: str,
    result: Annotated[
        Literal["CONTINUE", "ABANDON"] | None,
        typer.Option(
            "--result",
            help="CONTINUE (the API's default) deletes the node; ABANDON keeps it.",
        ),
    ] = None,
) -> None:
    """Answer a lifecycle hook: the waiting node goes on being deleted, or is kept (ABANDON)."""
    params = without_none(lifecycle_action_token=token, lifecycle_action_result=result)
    verb = f"completed ({result})" if result else "completed"
    _lifecycle(get_state(ctx), cluster, "complete_lifecycle", params, verb)


@app.command("lifecycle-heartbeat")
def lifecycle_heartbeat(ctx: typer.Context, cluster: str, token: str) -> None:
    """Extend the wait of a node held by a lifecycle hook."""
    params = {"lifecycle_action_token": token}
    _lifecycle(get_state(ctx), cluster, "lifecycle_heartbeat", params, "extended")


def _lifecycle(
    state: CliState, cluster: str, name: str, params: Mapping[str, object], verb: str
) -> None:
    reply = state.client.cluster_action(cluster, name, params)
    if state.json:
        print_json(reply.body)
    else:
        token = (reply.body or {}).get("action") or params["lifecycle_action_token"]
        print_message(f"Lifecycle action {token} {verb}.")
