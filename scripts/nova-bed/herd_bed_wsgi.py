"""Serve one WSGI app of the bed with gunicorn: ``python herd_bed_wsgi.py PROG MODULE:APP PORT``.

Nova's and Placement's WSGI entry points parse ``sys.argv`` with oslo.config, which refuses
gunicorn's own arguments; this runner hands gunicorn its options as settings and leaves the
app a ``sys.argv`` holding only its program name.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

from gunicorn.app.base import BaseApplication


class App(BaseApplication):  # type: ignore[misc]
    def __init__(self, target: str, port: int) -> None:
        self.target = target
        self.port = port
        super().__init__()

    def load_config(self) -> None:
        settings = {
            "bind": f"127.0.0.1:{self.port}",
            "workers": 1,
            "worker_class": "gthread",
            "threads": 8,
            "timeout": 300,
            "graceful_timeout": 5,
            # longer than the clients' pooled connections live: with gunicorn's 2 s default a
            # request could go out on a connection the server was closing (connection reset)
            "keepalive": 75,
            # gunicorn's control socket defaults to one path in $HOME: shared by every instance
            "control_socket_disable": True,
        }
        for key, value in settings.items():
            self.cfg.set(key, value)

    def load(self) -> Any:
        module, _, attr = self.target.partition(":")
        return getattr(importlib.import_module(module), attr)


def main() -> None:
    prog, target, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    sys.argv = [prog]
    App(target, port).run()


if __name__ == "__main__":
    main()
