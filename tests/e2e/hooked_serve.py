"""A test-only ``herd serve`` that can hold a cluster deletion open between its two halves.

``python -m tests.e2e.hooked_serve --port N --data-dir D [--db-url U] --regions-pause S``
serves herd exactly as ``herd serve`` does (settings from the ``HERD_*`` environment), except
that CLUSTER_DELETE waits ``S`` seconds after the regional copies are gone and before the
central row goes: the window a crash test kills the server in. No herd setting can do this,
so a production ``herd serve`` never waits there.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import uvicorn

from herd.api.app import create_app
from herd.config import load_settings
from herd.regions import Regions
from herd.store.models import ClusterRow


class PausingRegions(Regions):
    """Regions whose ``delete_copies`` waits once every copy is gone."""

    pause = 0.0

    def delete_copies(self, cluster: ClusterRow) -> str | None:
        error = super().delete_copies(cluster)
        if error is None and self.pause > 0:
            time.sleep(self.pause)
        return error


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--db-url", default=None)
    parser.add_argument("--regions-pause", type=float, default=0.0)
    options = parser.parse_args()
    settings = load_settings(port=options.port, data_dir=options.data_dir, db_url=options.db_url)
    regions = PausingRegions.from_settings(settings)
    regions.pause = options.regions_pause
    app = create_app(settings, regions=regions)
    try:
        uvicorn.run(app, host=settings.host, port=settings.port, log_level="info")
    finally:
        regions.close()


if __name__ == "__main__":
    main()
