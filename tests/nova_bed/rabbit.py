"""A private RabbitMQ for the bed: Debian's ``rabbitmq-server`` run as the current user.

Everything the broker would share with another instance on this machine is its own: node
name, AMQP and distribution ports, its own ``epmd`` on its own port (``ERL_EPMD_PORT``; the
default 4369 may belong to the system's broker or another helper's), data and log
directories, config file and Erlang cookie (``HOME``). Debian's ``/usr/sbin`` wrapper switches
to the ``rabbitmq`` user, so the script under ``/usr/lib/rabbitmq/bin`` is run directly.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.nova_bed.processes import Service
from tests.postgres import free_port

SERVER_CANDIDATES = ("/usr/lib/rabbitmq/bin/rabbitmq-server", "/usr/sbin/rabbitmq-server")


def find_rabbitmq() -> str | None:
    for candidate in SERVER_CANDIDATES:
        if Path(candidate).exists():
            return candidate
    return shutil.which("rabbitmq-server")


def find_epmd() -> str | None:
    found = shutil.which("epmd")
    if found:
        return found
    return "/usr/lib/erlang/bin/epmd" if Path("/usr/lib/erlang/bin/epmd").exists() else None


class Rabbit:
    """One broker: ``start()`` then ``transport_url``; ``stop()`` ends it and its epmd."""

    def __init__(self, base: Path, logs: Path) -> None:
        self.base = base
        self.port = free_port()
        self.dist_port = free_port()
        self.epmd_port = free_port()
        self.node = f"herd-nova-{self.port}@localhost"
        self.services: list[Service] = []
        self.logs = logs

    @property
    def transport_url(self) -> str:
        return f"rabbit://guest:guest@127.0.0.1:{self.port}/"

    def env(self) -> dict[str, str]:
        base = self.base
        return {
            "HOME": str(base),
            "ERL_EPMD_PORT": str(self.epmd_port),
            "RABBITMQ_NODENAME": self.node,
            "RABBITMQ_NODE_IP_ADDRESS": "127.0.0.1",
            "RABBITMQ_NODE_PORT": str(self.port),
            "RABBITMQ_DIST_PORT": str(self.dist_port),
            "RABBITMQ_MNESIA_BASE": str(base / "mnesia"),
            "RABBITMQ_LOG_BASE": str(base / "log"),
            "RABBITMQ_LOGS": "-",
            "RABBITMQ_PID_FILE": str(base / "rabbit.pid"),
            "RABBITMQ_CONFIG_FILE": str(base / "rabbitmq.conf"),
            "RABBITMQ_ADVANCED_CONFIG_FILE": str(base / "advanced.config"),
            "RABBITMQ_CONF_ENV_FILE": str(base / "rabbitmq-env.conf"),
            "RABBITMQ_ENABLED_PLUGINS_FILE": str(base / "enabled_plugins"),
        }

    def start(self) -> None:
        server, epmd = find_rabbitmq(), find_epmd()
        if server is None or epmd is None:
            raise RuntimeError("rabbitmq-server is not installed (Debian package rabbitmq-server)")
        for sub in ("mnesia", "log"):
            (self.base / sub).mkdir(parents=True, exist_ok=True)
        (self.base / "rabbitmq-env.conf").write_text("")
        (self.base / "enabled_plugins").write_text("[].\n")
        (self.base / "rabbitmq.conf").write_text(
            f"listeners.tcp.1 = 127.0.0.1:{self.port}\n"
            "disk_free_limit.absolute = 50MB\n"
            "log.console = true\n"
            "log.file = false\n"
        )
        env = self.env()
        # our own epmd, in the foreground, so stopping it is stopping our process
        epmd_service = Service(
            "epmd",
            [epmd, "-port", str(self.epmd_port), "-address", "127.0.0.1"],
            self.logs / "epmd.log",
            env,
        )
        epmd_service.start()
        self.services.append(epmd_service)
        epmd_service.wait_port(self.epmd_port, timeout=30)
        broker = Service("rabbitmq", [server], self.logs / "rabbitmq.log", env, cwd=self.base)
        broker.start()
        self.services.append(broker)
        self.broker = broker

    def wait(self) -> None:
        self.broker.wait_port(self.port, timeout=180)

    def stop(self) -> None:
        for service in reversed(self.services):
            service.stop()
