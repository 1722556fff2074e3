"""A real Heat for the tests: openstack-heat from PyPI (``make heat-bed``) on the Keystone bed.

:class:`HeatBed` gives Heat what a deployment gives it: its service user ``heat`` (roles
``service`` and ``admin`` in project ``service``, as devstack makes it) in the Keystone bed,
the ``orchestration`` service in the catalog, a database made by ``heat-manage db_sync`` (the
suite's PostgreSQL when given one: heat-api and heat-engine on one SQLite file see "database
is locked"), and a private RabbitMQ (the Nova bed's helper, ``tests/nova_bed/rabbit.py``) for
heat-api and heat-engine, two processes that talk over RPC. Both listen on 127.0.0.1 only,
heat-api on a free port. Heat finds herd as the ``clustering`` service of the same catalog.

The release is 22.0.1 (2024.1), not the 2026.2 one that matches Keystone 30: Heat 23.0.0
replaced every ``OS::Senlin::*`` resource by a hidden ``NoneResource`` that does nothing
(Senlin was retired), so 22.x is the last Heat whose Senlin resources call a clustering
service (docs/heat.md).

Without the bed the tests that need it skip, saying how to install it (:func:`missing_reason`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from tests.keystone_bed import PASSWORD, REGION, KeystoneBed
from tests.keystone_bed import missing_reason as keystone_missing
from tests.nova_bed.processes import Service, run_checked, stop_groups, tail
from tests.nova_bed.rabbit import Rabbit, find_rabbitmq
from tests.postgres import PgServer, free_port

ROOT = Path(__file__).resolve().parent.parent
BED = Path(os.environ.get("HERD_HEAT_BED", ROOT / ".beds" / "heat"))
# 32 characters: Heat encrypts the stored credentials of its stacks with it
AUTH_ENCRYPTION_KEY = "herd-heat-bed-encryption-key-32c"


def missing_reason() -> str | None:
    """Why the Heat bed cannot run here (None: it can)."""
    for tool in ("heat-api", "heat-engine", "heat-manage"):
        if not (BED / "bin" / tool).exists():
            return f"no Heat bed ({BED / 'bin' / tool} missing): run `make heat-bed`"
    if find_rabbitmq() is None:
        return "rabbitmq-server is not installed (Debian package rabbitmq-server)"
    return keystone_missing()


class HeatBed:
    """heat-api, heat-engine and their broker, with their files in ``workdir``."""

    def __init__(self, workdir: Path, keystone: KeystoneBed, database_url: str = "") -> None:
        """``database_url``: an empty database (SQLAlchemy URL); empty: SQLite in ``workdir``."""
        self.workdir = workdir
        self.keystone = keystone
        self.database_url = database_url or f"sqlite:///{workdir / 'heat.db'}"
        self.port = free_port()
        self.conf = workdir / "heat.conf"
        self.logs = workdir / "logs"
        self.rabbit = Rabbit(workdir / "rabbit", self.logs)
        self.services: list[Service] = []

    @property
    def url(self) -> str:
        """heat-api's root (the catalog's URL adds ``/v1/<project id>``)."""
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 300.0) -> HeatBed:
        self.logs.mkdir(parents=True, exist_ok=True)
        self.rabbit.start()
        admin = self.keystone.token("admin", "admin")
        heat = self.keystone.add_user(admin, "heat", "service", "service")
        self.keystone.grant(admin, heat, "admin")
        self.keystone.register_service("heat", "orchestration", f"{self.url}/v1/$(project_id)s")
        self._write_conf()
        self.rabbit.wait()
        config = ["--config-file", str(self.conf)]
        run_checked(
            [str(BED / "bin" / "heat-manage"), *config, "db_sync"],
            self.logs / "db_sync.log",
            {},
            "heat-manage db_sync",
        )
        for name in ("heat-engine", "heat-api"):
            service = Service(
                name,
                [str(BED / "bin" / name), *config],
                self.logs / f"{name}.log",
                cwd=self.workdir,
            )
            service.start()
            self.services.append(service)
        api = self.services[-1]
        api.wait_http(f"{self.url}/", timeout=timeout)
        self._wait_for_engine(timeout)
        return self

    def _write_conf(self) -> None:
        keystone = self.keystone.url
        etc = BED / "etc" / "heat"
        service_auth = (
            "auth_type = password\n"
            f"auth_url = {keystone}\n"
            "username = heat\n"
            f"password = {PASSWORD}\n"
            "user_domain_id = default\n"
        )
        self.conf.write_text(
            "[DEFAULT]\n"
            f"transport_url = {self.rabbit.transport_url}\n"
            f"auth_encryption_key = {AUTH_ENCRYPTION_KEY}\n"
            f"region_name_for_services = {REGION}\n"
            f"environment_dir = {etc / 'environment.d'}\n"
            f"template_dir = {etc / 'templates'}\n"
            # one engine process: the machine is small
            "num_engine_workers = 1\n"
            # the legacy engine runs a stack's work in the engine that took the request:
            # fewer database writes and RPC round trips than convergence on a busy machine
            "convergence_engine = false\n"
            "periodic_interval = 5\n"
            "debug = true\n"
            "[database]\n"
            f"connection = {self.database_url}\n"
            "[paste_deploy]\n"
            f"api_paste_config = {etc / 'api-paste.ini'}\n"
            "[heat_api]\n"
            "bind_host = 127.0.0.1\n"
            f"bind_port = {self.port}\n"
            "workers = 1\n"
            "[oslo_messaging_rabbit]\n"
            "heartbeat_timeout_threshold = 0\n"
            "[keystone_authtoken]\n"
            f"www_authenticate_uri = {keystone}\n"
            f"{service_auth}"
            "project_name = service\n"
            "project_domain_id = default\n"
            "[trustee]\n"
            f"{service_auth}"
            "[clients_keystone]\n"
            f"auth_uri = {keystone.removesuffix('/v3')}\n"
            "[ec2authtoken]\n"
            f"auth_uri = {keystone}\n"
        )

    def _wait_for_engine(self, timeout: float) -> None:
        """heat-api answers before heat-engine listens on the bus; a stack list goes to it."""
        token = self.keystone.token("admin", "admin")
        url = f"{self.url}/v1/{self.keystone.projects['admin']}/stacks"
        end = time.monotonic() + timeout
        last = ""
        while time.monotonic() < end:
            for service in self.services:
                if not service.alive():
                    raise service.failure("exited while the bed started")
            try:
                answer = httpx.get(url, headers={"X-Auth-Token": token}, timeout=60)
                if answer.status_code == 200:
                    return
                last = f"{answer.status_code} {answer.text[:300]}"
            except httpx.HTTPError as error:
                last = repr(error)
            time.sleep(1)
        raise RuntimeError(
            f"heat-engine did not answer a stack list ({last}); "
            f"heat-engine.log:\n{tail(self.logs / 'heat-engine.log')}"
        )

    def stop(self) -> None:
        stop_groups([s.pid for s in self.services if s.proc is not None], 15)
        self.rabbit.stop()


@contextmanager
def running_heat(directory: Path, keystone: KeystoneBed, pg_server: PgServer) -> Iterator[HeatBed]:
    """A Heat bed in ``directory`` on ``keystone``, its database made on the suite's
    PostgreSQL and dropped on exit with the bed (the e2e modules' ``heat`` fixtures)."""
    name = pg_server.create_database(migrated=False)
    bed = HeatBed(directory, keystone, pg_server.url_for(name))
    try:
        yield bed.start()
    finally:
        bed.stop()
        pg_server.drop_database(name)
