"""``herd token``: API credentials, written straight into the database."""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from herd.cli.common import CommandFailed, get_state
from herd.cli.output import Column, id_column, print_json, print_message, print_table, time_column
from herd.cli.server import DataDirOption, DbUrlOption
from herd.errors import InvalidRequest

if TYPE_CHECKING:
    from herd.store.database import Database

app = typer.Typer(
    help="API tokens (run on the server, against its database).", no_args_is_help=True
)

TOKEN_FIELDS = ("id", "name", "project", "role", "regions", "created_at", "expires_at")
TOKEN_COLUMNS = [
    id_column(),
    Column("name", "name"),
    Column("project", "project"),
    Column("role", "role"),
    Column("regions", "regions"),
    time_column("created_at"),
    time_column("expires_at"),
]


def _database(data_dir: Path | None, db_url: str | None) -> Database:
    from herd.cli.server import settings_or_exit
    from herd.store.database import Database

    settings = settings_or_exit(data_dir=data_dir, db_url=db_url)
    if not settings.db_url:
        # A token in a database no server reads is a silent failure: refuse to make one.
        db_file = (settings.data_dir / "herd.db").resolve()
        if not db_file.is_file():
            raise CommandFailed(
                f"no herd database at {db_file}: run herd token where herd serve keeps its "
                "data, or give --data-dir DIR (HERD_DATA_DIR) or --db-url URL (HERD_DB_URL)"
            )
    database = Database(
        settings.database_url(),
        sqlite_synchronous=settings.sqlite_synchronous,
        member_cache_members=settings.member_cache_members,
    )
    database.migrate()
    return database


def _as_dict(row: object) -> dict[str, object]:
    return {name: getattr(row, name, None) for name in TOKEN_FIELDS}


def _regions(role: str, regions: list[str] | None, all_regions: bool) -> list[str] | None:
    """The regions to store on the token; None for every region.

    An agent token is regional unless the operator says ``--all-regions``: least
    privilege is the default, a token that reads every region is a choice.
    """
    if role != "agent":
        if regions or all_regions:
            raise CommandFailed("--region and --all-regions are for agent tokens only")
        return None
    if regions and all_regions:
        raise CommandFailed("give --region or --all-regions, not both")
    if not regions and not all_regions:
        raise CommandFailed(
            "an agent token needs --region R (repeat it for more regions), "
            "or --all-regions for one that reads every region"
        )
    return regions or None


def _show_regions(record: Mapping[str, object]) -> dict[str, object]:
    regions = record.get("regions")
    if record.get("role") == "agent" and regions is None:
        return {**record, "regions": "(all)"}
    return {**record, "regions": ",".join(map(str, regions)) if isinstance(regions, list) else ""}


@app.command("create")
def create(
    ctx: typer.Context,
    project: Annotated[str, typer.Option(help="The project the token acts in.")],
    role: Annotated[Literal["admin", "member", "agent"], typer.Option(help="What it may do.")],
    name: Annotated[str | None, typer.Option(help="A label for listings.")] = None,
    expires_in: Annotated[
        float | None,
        typer.Option(help="Seconds until the token stops working (default: never).", min=1),
    ] = None,
    region: Annotated[
        list[str] | None,
        typer.Option(help="A region an agent token reads (repeatable; agent tokens only)."),
    ] = None,
    all_regions: Annotated[
        bool, typer.Option(help="An agent token that reads every region (instead of --region).")
    ] = False,
    data_dir: DataDirOption = None,
    db_url: DbUrlOption = None,
) -> None:
    """Create a token and print its secret (shown only this once)."""
    from herd.store.tokens import create_token  # type: ignore[import-not-found, unused-ignore]

    state = get_state(ctx)
    regions = _regions(role, region, all_regions)
    database = _database(data_dir, db_url)
    try:
        with database.write() as session:
            now = time.time()
            expires_at = None if expires_in is None else now + expires_in
            row, secret = create_token(
                session,
                project,
                role,
                name or "",
                now,
                expires_at=expires_at,
                regions=regions,
            )
            record = _as_dict(row)
    except InvalidRequest as exc:
        raise CommandFailed(exc.message) from None
    finally:
        database.dispose()
    if state.json:
        print_json({"token": {**record, "secret": secret}})
    else:
        print_table([_show_regions(record)], TOKEN_COLUMNS, full_id=True)
        print_message(f"Secret (shown once, send it as X-Auth-Token): {secret}")


@app.command("list")
def list_(ctx: typer.Context, data_dir: DataDirOption = None, db_url: DbUrlOption = None) -> None:
    """List tokens (never their secrets)."""
    from herd.store.tokens import list_tokens  # type: ignore[import-not-found, unused-ignore]

    state = get_state(ctx)
    database = _database(data_dir, db_url)
    try:
        with database.read() as session:
            rows = [_as_dict(row) for row in list_tokens(session)]
    finally:
        database.dispose()
    if state.json:
        print_json({"tokens": rows})
    else:
        print_table([_show_regions(row) for row in rows], TOKEN_COLUMNS, full_id=True)


@app.command("revoke")
def revoke(
    ctx: typer.Context,
    token_id: str,
    data_dir: DataDirOption = None,
    db_url: DbUrlOption = None,
) -> None:
    """Revoke a token by its id or an unambiguous prefix of at least 8 characters."""
    from herd.store.tokens import revoke as revoke_token  # type: ignore[import-not-found, unused-ignore]

    state = get_state(ctx)
    database = _database(data_dir, db_url)
    try:
        with database.write() as session:
            result = revoke_token(session, token_id)
    except InvalidRequest as exc:
        raise CommandFailed(exc.message) from None
    finally:
        database.dispose()
    if result is False:
        raise CommandFailed(f"no token with id {token_id} (or the prefix is ambiguous)")
    if state.json:
        print_json({"revoked": token_id})
    else:
        print_message(f"Token {token_id} revoked.")
