"""The ``herd`` command: the typer app and :func:`main`."""

from __future__ import annotations

import os
import sys
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from herd.cli import (
    actions,
    cluster_actions,
    cluster_health,
    clusters,
    deletions,
    events,
    nodes,
    policies,
    profiles,
    receivers,
    server,
    tokens,
)
from herd.cli.client import DEFAULT_URL, ApiError
from herd.cli.common import CliState, CommandFailed
from herd.cli.output import print_error
from herd.errors import HerdError

_ = (cluster_actions, cluster_health)  # imported for their commands (``herd cluster ...``)


class HerdGroup(TyperGroup):
    """The root group: turns every expected failure into a message and an exit code."""

    def invoke(self, ctx: Any) -> Any:  # typer vendors its own click Context
        try:
            return super().invoke(ctx)
        except ApiError as exc:
            print_error(exc.describe())
            raise typer.Exit(1) from None
        except CommandFailed as exc:
            print_error(exc.message)
            raise typer.Exit(exc.exit_code) from None
        except HerdError as exc:
            print_error(f"{exc} ({exc.code})")
            raise typer.Exit(1) from None
        except KeyboardInterrupt:
            print_error("interrupted (any action started goes on; see 'herd action list')")
            raise typer.Exit(130) from None


app = typer.Typer(
    cls=HerdGroup,
    name="herd",
    help="herd: a clustering service with an OpenStack Senlin compatible API.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback()
def root(
    ctx: typer.Context,
    url: Annotated[
        str, typer.Option(envvar="HERD_URL", help="The herd API endpoint.")
    ] = DEFAULT_URL,
    token: Annotated[
        str | None, typer.Option(envvar="HERD_TOKEN", help="Sent as X-Auth-Token.")
    ] = None,
    json: Annotated[bool, typer.Option("--json", help="Print the raw JSON answers.")] = False,
    full_id: Annotated[
        bool, typer.Option("--full-id", help="Show whole ids in tables, not 8 characters.")
    ] = False,
) -> None:
    state = CliState(url=url, token=token, json=json, full_id=full_id)
    ctx.obj = state
    ctx.call_on_close(state.close)


app.add_typer(profiles.app, name="profile")
app.add_typer(profiles.types_app, name="profile-type")
app.add_typer(policies.app, name="policy")
app.add_typer(policies.types_app, name="policy-type")
app.add_typer(clusters.app, name="cluster")
app.add_typer(nodes.app, name="node")
app.add_typer(actions.app, name="action")
app.add_typer(events.app, name="event")
app.add_typer(receivers.app, name="receiver")
app.add_typer(deletions.app, name="deletions")
app.add_typer(tokens.app, name="token")
server.register(app)


def hoist_global_flags(argv: list[str]) -> list[str]:
    """Let ``--json`` and ``--full-id`` also come after the subcommand."""
    flags = {"--json", "--full-id"}
    if "--" in argv:
        end = argv.index("--")
        head, tail = argv[:end], argv[end:]
    else:
        head, tail = argv, []
    found = [arg for arg in head if arg in flags]
    rest = [arg for arg in head if arg not in flags]
    return [*dict.fromkeys(found), *rest, *tail]


def main() -> None:
    argv = sys.argv[1:]
    try:
        if argv[:1] == ["iallocator"]:
            # hail-style options: typer must not parse them
            sys.exit(server.run_iallocator(argv[1:]))
        app(args=hoist_global_flags(argv), prog_name="herd")
    except BrokenPipeError:
        # The reader left early (``herd node list | head``): no traceback, and nothing more
        # to flush into the closed pipe at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)


if __name__ == "__main__":
    main()
