"""A test-only ``herd serve`` whose engine holds chosen actions in flight for a while.

``python -m tests.e2e.holding_serve --hold CLUSTER_CHECK --hold NODE_CHECK --hold-seconds S
--hold-when after --port N --data-dir D [--db-url U]`` serves herd exactly as ``herd serve``
does (settings from the ``HERD_*`` environment), except that each named action, once it holds
its locks, waits ``S`` seconds: ``after`` its handler did its work and before its end is
written (a crash there makes the resumed run go over what the first one did), or ``before``
its handler starts (a cancel there lands before any work), while the file ``hold-actions``
exists in the data directory (so a test's set-up runs unheld). The wait honours cancel requests,
as every wait of an action does (``ActionExecution.wait``).

Actions whose work is a few database writes (policy bindings, checks of simulated servers,
membership swaps) end too quickly for a crash or a cancel to land in them; slow driver
calls (the sim profile's ``create_latency``/``delete_latency``) hold the others. No herd
setting can do this, so a production ``herd serve`` never waits there; the crash matrix
restarts a plain ``herd serve``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from herd.cli.server import serve
from herd.engine import service
from herd.engine.actions import handler_table
from herd.engine.execution import ActionExecution, Outcome
from herd.engine.runner import Handler
from herd.types import ActionName

#: the file in the data directory whose presence switches the holds on
HOLD_SWITCH = "hold-actions"


def holding(handler: Handler, seconds: float, when: str, switch: Path) -> Handler:
    """``handler``, held ``seconds`` while the file ``switch`` exists (set-ups run unheld)."""

    def held(ex: ActionExecution) -> Outcome:
        if not switch.exists():
            return handler(ex)
        if when == "before":
            ex.wait(seconds)
            return handler(ex)
        outcome = handler(ex)
        ex.wait(seconds)
        return outcome

    return held


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--db-url", default=None)
    parser.add_argument("--hold", action="append", default=[], type=ActionName)
    parser.add_argument("--hold-seconds", type=float, default=0.0)
    parser.add_argument("--hold-when", choices=("before", "after"), default="after")
    options = parser.parse_args()
    held = set(options.hold)
    switch = options.data_dir / HOLD_SWITCH

    def table(*args: object, **kwargs: object) -> dict[ActionName, Handler]:
        handlers = handler_table(*args, **kwargs)  # type: ignore[arg-type]
        return {
            name: holding(handler, options.hold_seconds, options.hold_when, switch)
            if name in held
            else handler
            for name, handler in handlers.items()
        }

    service.handler_table = table  # type: ignore[attr-defined]
    serve(port=options.port, data_dir=options.data_dir, db_url=options.db_url)


if __name__ == "__main__":
    main()
