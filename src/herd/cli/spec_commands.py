"""The commands ``herd profile`` and ``herd policy`` share, and their ``-type`` groups.

Both resources are made from a spec and listed, shown, deleted and validated the
same way; only create and update differ (profiles have metadata), so those stay
in cli/profiles.py and cli/policies.py.

No ``from __future__ import annotations`` here: typer reads the commands'
annotations, and those built in :func:`add_spec_commands` name its arguments
(help texts, metavars), which only evaluated annotations can see.
"""

from collections.abc import Callable
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
from herd.cli.output import (
    Column,
    id_column,
    print_json,
    print_message,
    print_record,
    print_table,
    time_column,
)

COLUMNS = [
    id_column(),
    Column("name", "name"),
    Column("type", "type"),
    time_column("created_at"),
]
TYPE_COLUMNS = [Column("name", "name"), Column("version", "version")]

Printer = Callable[[bool, dict[str, object]], None]


def add_spec_commands(
    app: typer.Typer, types_app: typer.Typer, *, kind: str, plural: str
) -> Printer:
    """Register list, show, delete and validate on ``app``, list and show on ``types_app``;
    return how one resource is printed (for the kind's create and update)."""
    title = kind.capitalize()

    def show_reply(as_json: bool, body: dict[str, object]) -> None:
        if as_json:
            print_json(body)
        else:
            record = body.get(kind, body)
            print_record(record if isinstance(record, dict) else body)

    def list_(
        ctx: typer.Context,
        name: Annotated[str | None, typer.Option(help=f"Only {plural} with this name.")] = None,
        type_: Annotated[str | None, typer.Option("--type", help=f"Only this {kind} type.")] = None,
        limit: LimitOption = None,
        marker: MarkerOption = None,
        sort: SortOption = None,
    ) -> None:
        state = get_state(ctx)
        params = list_params(limit, marker, sort, name=name, type=type_)
        body = state.client.get(path(plural), params).body
        if state.json:
            print_json(body)
        else:
            print_table(body.get(plural, []), COLUMNS, full_id=state.full_id)

    def show(
        ctx: typer.Context, identity: Annotated[str, typer.Argument(metavar=kind.upper())]
    ) -> None:
        state = get_state(ctx)
        show_reply(state.json, state.client.get(path(plural, identity)).body)

    def delete(
        ctx: typer.Context,
        identities: Annotated[list[str], typer.Argument(metavar=kind.upper())],
    ) -> None:
        state = get_state(ctx)
        for identity in identities:
            state.client.delete(path(plural, identity))
            if not state.json:
                print_message(f"{title} {identity} deleted.")
        if state.json:
            print_json({"deleted": identities})

    def validate(ctx: typer.Context, spec_file: SpecFileOption) -> None:
        state = get_state(ctx)
        reply = state.client.post(path(plural, "validate"), {kind: {"spec": load_spec(spec_file)}})
        show_reply(state.json, reply.body)

    def type_list(ctx: typer.Context) -> None:
        state = get_state(ctx)
        body = state.client.get(path(f"{kind}-types")).body
        if state.json:
            print_json(body)
        else:
            print_table(body.get(f"{kind}_types", []), TYPE_COLUMNS)

    def type_show(ctx: typer.Context, type_name: str) -> None:
        state = get_state(ctx)
        body = state.client.get(path(f"{kind}-types", type_name)).body
        if state.json:
            print_json(body)
        else:
            print_record(body.get(f"{kind}_type", body))

    app.command("list", help=f"List {plural}.")(list_)
    app.command("show", help=f"Show one {kind} (by id, short id or name).")(show)
    app.command("delete", help=f"Delete one or more {plural}.")(delete)
    app.command("validate", help="Check a spec without storing it.")(validate)
    types_app.command("list", help=f"List {kind} types.")(type_list)
    types_app.command("show", help=f"Show a {kind} type and its schema.")(type_show)
    return show_reply
