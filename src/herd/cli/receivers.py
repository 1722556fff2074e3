"""``herd receiver``: webhooks that start an action on a cluster, and their URLs."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from herd.cli.client import JSONObject, path
from herd.cli.common import (
    DEFAULT_WAIT_TIMEOUT,
    CommandFailed,
    LimitOption,
    MarkerOption,
    SortOption,
    WaitOption,
    WaitTimeoutOption,
    get_state,
    list_params,
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
from herd.cli.wait import finish
from herd.json_types import object_at

app = typer.Typer(
    help="Receivers: URLs (webhooks, Alertmanager) that start an action on a cluster.",
    no_args_is_help=True,
)

RECEIVER_COLUMNS = [
    id_column(),
    Column("name", "name"),
    Column("type", "type"),
    id_column("cluster_id", "cluster_id"),
    Column("action", "action"),
    Column("params", "params"),
    time_column("created_at"),
]
ParamOption = Annotated[
    list[str] | None,
    typer.Option(
        "--param",
        "-p",
        help='KEY=VALUE for the action (VALUE read as JSON when it parses, e.g. 2 or ["a"]); '
        "repeat for several.",
    ),
]


def parse_params(items: list[str] | None) -> JSONObject | None:
    """``["count=2", ...]`` to ``{"count": 2}``; None when nothing was given."""
    if items is None:
        return None
    params: JSONObject = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise CommandFailed(f"--param must be KEY=VALUE, got {item!r}")
        try:
            value: object = json.loads(text)
        except ValueError:
            value = text
        params[key] = value
    return params


def _show(as_json: bool, body: JSONObject) -> None:
    if as_json:
        print_json(body)
        return
    record = object_at(body, "receiver") if "receiver" in body else body
    print_record(record)
    channel = object_at(record, "channel")
    # Rich folds long values inside tables; print the URLs whole so they can be copied.
    for key in ("alarm_url", "alertmanager_url"):
        if channel.get(key):
            print_message(f"{key}: {channel[key]}")


@app.command("create")
def create(
    ctx: typer.Context,
    name: str,
    cluster: Annotated[str, typer.Option("--cluster", "-c", help="The target cluster.")],
    action: Annotated[
        str, typer.Option("--action", "-a", help="The cluster action, e.g. CLUSTER_SCALE_OUT.")
    ],
    params: ParamOption = None,
    type_: Annotated[str, typer.Option("--type", help="Receiver type.")] = "webhook",
) -> None:
    """Create a receiver and print the URLs (they carry its secret) that trigger it."""
    state = get_state(ctx)
    body: JSONObject = {"name": name, "type": type_, "cluster_id": cluster, "action": action}
    body.update(without_none(params=parse_params(params)))
    _show(state.json, state.client.post(path("receivers"), {"receiver": body}).body)


@app.command("list")
def list_(
    ctx: typer.Context,
    name: Annotated[str | None, typer.Option(help="Only receivers with this name.")] = None,
    cluster: Annotated[
        str | None, typer.Option("--cluster", help="Only receivers of this cluster id.")
    ] = None,
    action: Annotated[str | None, typer.Option(help="Only receivers of this action.")] = None,
    type_: Annotated[str | None, typer.Option("--type", help="Only this receiver type.")] = None,
    global_project: Annotated[
        bool, typer.Option("--global-project", help="Every project's (admins).")
    ] = False,
    limit: LimitOption = None,
    marker: MarkerOption = None,
    sort: SortOption = None,
) -> None:
    """List receivers."""
    state = get_state(ctx)
    params = list_params(
        limit,
        marker,
        sort,
        name=name,
        cluster_id=cluster,
        action=action,
        type=type_,
        global_project=True if global_project else None,
    )
    body = state.client.get(path("receivers"), params).body
    if state.json:
        print_json(body)
    else:
        print_table(body.get("receivers", []), RECEIVER_COLUMNS, full_id=state.full_id)


@app.command("show")
def show(ctx: typer.Context, receiver: str) -> None:
    """Show one receiver (by id, short id or name) with the URLs that trigger it."""
    state = get_state(ctx)
    _show(state.json, state.client.get(path("receivers", receiver)).body)


@app.command("update")
def update(
    ctx: typer.Context,
    receiver: str,
    name: Annotated[str | None, typer.Option(help="The new name.")] = None,
    action: Annotated[str | None, typer.Option(help="The new cluster action.")] = None,
    params: ParamOption = None,
    clear_params: Annotated[
        bool, typer.Option("--clear-params", help="Remove every stored parameter.")
    ] = False,
    rotate_secret: Annotated[
        bool,
        typer.Option("--rotate-secret", help="New secret: new URLs, the old ones stop working."),
    ] = False,
) -> None:
    """Change a receiver's name, action or params, or rotate its secret."""
    state = get_state(ctx)
    new_params = {} if clear_params else parse_params(params)
    body = without_none(
        name=name, action=action, params=new_params, rotate_secret=rotate_secret or None
    )
    if not body:
        raise CommandFailed("nothing to update: give --name, --action, --param or --rotate-secret")
    reply = state.client.patch(path("receivers", receiver), {"receiver": body})
    _show(state.json, reply.body)


@app.command("delete")
def delete(ctx: typer.Context, receivers: list[str]) -> None:
    """Delete one or more receivers (their URLs stop working)."""
    state = get_state(ctx)
    for receiver in receivers:
        state.client.delete(path("receivers", receiver))
        if not state.json:
            print_message(f"Receiver {receiver} deleted.")
    if state.json:
        print_json({"deleted": receivers})


@app.command("trigger")
def trigger(
    ctx: typer.Context,
    url: Annotated[str, typer.Argument(help="The receiver's alarm_url (it holds the secret).")],
    params: ParamOption = None,
    wait: WaitOption = False,
    wait_timeout: WaitTimeoutOption = DEFAULT_WAIT_TIMEOUT,
) -> None:
    """POST to a webhook URL, as an alarm would; print (or follow) the action it started."""
    state = get_state(ctx)
    if "/webhooks/" not in url:
        raise CommandFailed(f"not a receiver URL: {url!r} (see 'herd receiver create')")
    reply = state.client.post(url, without_none(params=parse_params(params)))
    finish(state, reply, wait=wait, wait_timeout=wait_timeout)
