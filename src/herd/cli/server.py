"""Server-side commands: ``herd serve``, ``herd engine``, ``herd agent``, ``herd iallocator``.

Their targets are imported inside each command, so the client commands work
(and start fast) whatever state the server modules are in.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from herd.cli.common import get_state

if TYPE_CHECKING:
    from herd.config import Settings

DataDirOption = Annotated[
    Path | None, typer.Option("--data-dir", help="Where the SQLite file and node state live.")
]
DbUrlOption = Annotated[
    str | None, typer.Option("--db-url", help="SQLAlchemy URL, e.g. postgresql://... .")
]
LogFormatOption = Annotated[
    Literal["text", "json"] | None,
    typer.Option("--log-format", help="text (default) or json: one JSON object per line."),
]


def settings_or_exit(**overrides: object) -> Settings:
    """The settings of a server command; a bad one ends it with a line naming it, not a trace."""
    from pydantic import ValidationError

    from herd.config import load_settings

    try:
        return load_settings(**overrides)
    except ValidationError as exc:
        for error in exc.errors():
            where = ".".join(str(part) for part in error["loc"])
            if where:
                env = f"HERD_{where.upper()}"
                typer.echo(f"herd: invalid setting {where} ({env}): {error['msg']}", err=True)
            else:  # a combination (config.py's Settings._coherent): its text names the settings
                reason = str(error["msg"]).removeprefix("Value error, ")
                typer.echo(f"herd: invalid settings: {reason}", err=True)
        raise typer.Exit(2) from None


def serve(
    host: Annotated[str | None, typer.Option(help="Address to listen on.")] = None,
    port: Annotated[int | None, typer.Option(help="Port to listen on.")] = None,
    data_dir: DataDirOption = None,
    db_url: DbUrlOption = None,
    auth: Annotated[
        Literal["none", "token", "keystone"] | None,
        typer.Option(
            help="none (loopback only), token (herd's tokens in X-Auth-Token) or keystone "
            "(Keystone tokens; HERD_KEYSTONE_* settings)."
        ),
    ] = None,
    no_engine: Annotated[
        bool, typer.Option("--no-engine", help="Serve the API only; engines run apart.")
    ] = False,
    log_format: LogFormatOption = None,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            min=1,
            help="API worker processes (HERD_API_WORKERS); this process runs the one engine.",
        ),
    ] = None,
) -> None:
    """Run the API (and, unless --no-engine, the engine) in this process."""
    from herd.api.server import serve as run_server  # type: ignore[import-not-found, unused-ignore]

    settings = settings_or_exit(
        host=host,
        port=port,
        data_dir=data_dir,
        db_url=db_url,
        auth=auth,
        run_engine=False if no_engine else None,
        log_format=log_format,
        api_workers=workers,
    )
    run_server(settings)


def engine(
    data_dir: DataDirOption = None,
    db_url: DbUrlOption = None,
    log_format: LogFormatOption = None,
    metrics_port: Annotated[
        int | None, typer.Option("--metrics-port", help="Serve /metrics on this port.")
    ] = None,
) -> None:
    """Run an engine only (several can share one PostgreSQL database)."""
    from herd.engine.service import run_forever
    from herd.regions import Regions

    settings = settings_or_exit(
        data_dir=data_dir,
        db_url=db_url,
        log_format=log_format,
        engine_metrics_port=metrics_port,
    )
    regions = Regions.from_settings(settings) if settings.regions else None
    try:
        run_forever(settings, regions_delete=regions.delete_copies if regions else None)
    finally:
        if regions is not None:
            regions.close()


def agent(
    ctx: typer.Context,
    region: Annotated[str, typer.Option(help="The region this agent reconciles.")],
    url: Annotated[str | None, typer.Option(help="Central API URL (default: --url).")] = None,
    token: Annotated[str | None, typer.Option(help="Agent credential (default: --token).")] = None,
    data_dir: DataDirOption = None,
) -> None:
    """Run the regional agent for one region."""
    from herd.agent.reconciler import run_forever  # type: ignore[import-not-found, unused-ignore]

    state = get_state(ctx)
    run_forever(settings_or_exit(data_dir=data_dir), region, url or state.url, token or state.token)


def iallocator(ctx: typer.Context) -> None:
    """Ganeti-style iallocator (hail options); see 'herd iallocator --help'."""
    raise typer.Exit(run_iallocator(list(ctx.args)))


def run_iallocator(argv: list[str]) -> int:
    """Hand the raw arguments to the iallocator, which parses its own options."""
    from herd.cli.iallocator import (  # type: ignore[import-not-found, unused-ignore]
        run_iallocator as run,
    )

    code: int = run(argv)
    return code


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
    app.command("engine")(engine)
    app.command("agent")(agent)
    app.command(
        "iallocator",
        context_settings={
            "allow_extra_args": True,
            "ignore_unknown_options": True,
            "help_option_names": [],
        },
        add_help_option=False,
    )(iallocator)


__all__ = ["register", "run_iallocator"]
