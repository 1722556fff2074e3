"""``--wait``: follow an action until it ends, showing its progress."""

from __future__ import annotations

import time
from collections.abc import Callable

from herd.cli.client import HerdClient, JSONObject, Reply, path
from herd.cli.common import CliState, CommandFailed
from herd.cli.output import print_json, print_message, print_record, stderr
from herd.json_types import list_at, object_at

TERMINAL = frozenset({"SUCCEEDED", "FAILED", "CANCELLED"})
TIMEOUT_EXIT_CODE = 3


def _describe(action: JSONObject, elapsed: float) -> str:
    children = list_at(action, "depends_on")
    parts = [
        f"{action.get('action') or action.get('name') or 'action'}",
        f"{str(action.get('id', ''))[:8]}",
        f"{action.get('status')}",
    ]
    if action.get("status_reason"):
        parts.append(f"- {action['status_reason']}")
    if children:
        parts.append(f"[{len(children)} child actions]")
    parts.append(f"({elapsed:.1f}s)")
    return " ".join(parts)


def wait_for_action(
    client: HerdClient,
    action_id: str,
    *,
    timeout: float,
    interval: float = 0.2,
    max_interval: float = 2.0,
    clock: Callable[[], float] = time.monotonic,
) -> JSONObject:
    """Poll ``GET /v1/actions/<id>`` until it ends; return it if it SUCCEEDED.

    Raises:
        CommandFailed: the action FAILED or was CANCELLED (exit 1, with its
            reason), or did not end within ``timeout`` seconds (exit 3).
    """
    console = stderr()
    started = clock()
    last_line = ""
    status_display = console.status("waiting") if console.is_terminal else None
    if status_display is not None:
        status_display.start()
    try:
        while True:
            action = dict(object_at(client.get(path("actions", action_id)).body, "action"))
            elapsed = clock() - started
            line = _describe(action, elapsed)
            if status_display is not None:
                status_display.update(line)
            elif line.rsplit(" (", 1)[0] != last_line.rsplit(" (", 1)[0]:
                console.print(line, markup=False)
            last_line = line
            status = action.get("status")
            if status in TERMINAL:
                break
            if elapsed >= timeout:
                raise CommandFailed(
                    f"action {action_id} still {status} after {timeout:g}s "
                    "(it goes on; see 'herd action show')",
                    exit_code=TIMEOUT_EXIT_CODE,
                )
            time.sleep(interval)
            interval = min(interval * 1.5, max_interval)
    finally:
        if status_display is not None:
            status_display.stop()
    if status != "SUCCEEDED":
        reason = action.get("status_reason") or "no reason given"
        raise CommandFailed(f"action {action_id} {status}: {reason}")
    return action


def finish(
    state: CliState,
    reply: Reply,
    *,
    key: str | None = None,
    wait: bool = False,
    wait_timeout: float = 3600.0,
) -> None:
    """Show the answer of an asynchronous call, then follow its action if asked."""
    action_id = reply.action_id
    if state.json:
        print_json(reply.body or ({"action": action_id} if action_id else {}))
    elif key and isinstance(reply.body.get(key), dict):
        print_record(reply.body.get(key))
    if action_id and not state.json:
        print_message(f"Action {action_id} accepted.")
    if not wait:
        return
    if not action_id:
        raise CommandFailed("the server answered without an action to wait for")
    action = wait_for_action(state.client, action_id, timeout=wait_timeout)
    if not state.json:
        print_message(f"Action {action_id} SUCCEEDED: {action.get('status_reason') or 'completed'}")
