"""Start and stop the Nova bed by hand (docs/testing.md).

    python -m tests.nova_bed up      # starts it (about a minute), prints the clouds.yaml path
    python -m tests.nova_bed status  # the state file
    python -m tests.nova_bed down    # stops it

``--root DIR`` chooses where its state and files go (default ``$NOVA_BED_DIR/run``).
``run`` is the supervisor itself (what ``up`` starts in the background).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from tests.nova_bed import control
from tests.nova_bed.configs import bed_dir
from tests.nova_bed.processes import BedError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.nova_bed")
    parser.add_argument("command", choices=["up", "down", "status", "run"])
    parser.add_argument("--root", type=Path, default=None)
    parser.add_argument("--watch-pid", type=int, default=None)
    args = parser.parse_args(argv)
    root: Path = (args.root or bed_dir() / "run").resolve()
    if args.command == "run":
        return control.supervise(root, args.watch_pid)
    if args.command == "up":
        try:
            info = control.ensure(root, watch_pid=None)
        except BedError as exc:
            print(f"the Nova bed did not start: {exc}", file=sys.stderr)
            return 1
        print(f"Nova bed ready: clouds.yaml {info.clouds_yaml}")
        print(f"  export OS_CLIENT_CONFIG_FILE={info.clouds_yaml} OS_CLOUD={info.cloud_name}")
        print(f"compute {info.compute_url}  image {info.image_url}  logs {info.logs}")
        print(f"notifications: {info.transport_url} exchange {info.notification_exchange}")
        return 0
    if args.command == "down":
        print("stopped" if control.stop(root) else f"no bed running in {root}")
        return 0
    state = control.read_state(root)
    print(json.dumps(state, indent=2) if state else f"no bed state in {root}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    sys.exit(main())
