"""The Nova bed's Neutron: a real neutron-api (Neutron 29, its own venv) or, without it, the stub.

``make neutron-bed`` installs Neutron 29.0.0 (the 2026.2 release, as the bed's nova 34) into
``.beds/neutron`` (``NEUTRON_BED_DIR``). Then the bed runs Neutron's own WSGI API under
gunicorn: ML2 with the flat and vlan type drivers and one mechanism driver of the bed's
(``scripts/neutron-bed/herd_bed_mech.py``) that binds every port without an agent, its
database on the bed's PostgreSQL, no DHCP or L3 agent, and the network ``private`` with the
subnet ``private-subnet`` (10.0.0.0/24; the names senlin-tempest-plugin's specs use), shared so
that every project may boot on it. Nova creates, binds and deletes ports through it.

Without that install the bed keeps ``neutron_stub.py`` (every list empty): the Nova tests run
either way, and the tests that need networks skip, naming ``make neutron-bed``.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import Any

import httpx
from tests.nova_bed.configs import REPO, SCRIPTS
from tests.nova_bed.processes import BedError, Service, run_checked

NEUTRON_SCRIPTS = REPO / "scripts" / "neutron-bed"
DIR_ENV = "NEUTRON_BED_DIR"
NETWORK = "private"
SUBNET = "private-subnet"
CIDR = "10.0.0.0/24"
#: the ML2 mechanism driver's entry point, written beside the configuration (nothing is
#: installed into the bed's venv for it)
METADATA = "Metadata-Version: 2.1\nName: herd-bed-neutron\nVersion: 1.0\n"
ENTRY_POINTS = "[neutron.ml2.mechanism_drivers]\nherd_bed = herd_bed_mech:HerdBedMechanismDriver\n"


def bed_dir() -> Path:
    given = os.environ.get(DIR_ENV, "").strip()
    path = Path(given) if given else Path(".beds/neutron")
    return path if path.is_absolute() else REPO / path


def venv_python() -> Path:
    return bed_dir() / "venv" / "bin" / "python"


def not_installed_reason() -> str | None:
    """Why the real Neutron cannot run here, or None when it is installed."""
    stamp = bed_dir() / ".installed"
    if not stamp.exists():
        return f"the Neutron bed is not installed ({stamp} missing): run `make neutron-bed`"
    if not venv_python().exists():
        return f"the Neutron bed in {bed_dir()} has no venv: run `make neutron-bed` again"
    return None


@dataclass
class Network:
    """What the bed's Neutron holds for the tests: the network and subnet ids by name."""

    networks: dict[str, str]
    subnets: dict[str, str]


class Neutron:
    """Neutron's configuration, schema, API process and seed, in ``base/neutron``."""

    def __init__(self, base: Path, logs: Path, port: int, database: str) -> None:
        self.dir = base / "neutron"
        self.logs = logs
        self.port = port
        self.database = database
        self.url = f"http://127.0.0.1:{port}"
        state = self.dir / "state"
        (state / "lock").mkdir(parents=True, exist_ok=True)
        dist = self.dir / "pylib" / "herd_bed_neutron-1.0.dist-info"
        dist.mkdir(parents=True, exist_ok=True)
        (dist / "METADATA").write_text(METADATA)
        (dist / "entry_points.txt").write_text(ENTRY_POINTS)
        paste = self.dir / "api-paste.ini"
        shutil.copy(NEUTRON_SCRIPTS / "api-paste.ini", paste)
        shutil.copy(NEUTRON_SCRIPTS / "ml2_conf.ini", self.dir / "ml2_conf.ini")
        template = Template((NEUTRON_SCRIPTS / "neutron.conf.in").read_text())
        values = {"paste_ini": paste, "state_path": state, "database": database}
        (self.dir / "neutron.conf").write_text(template.substitute(values))
        # the mechanism driver, its entry point, and herd_bed_auth (the paste filter)
        path = [str(self.dir / "pylib"), str(NEUTRON_SCRIPTS), str(SCRIPTS)]
        self.env = {
            "PYTHONPATH": os.pathsep.join(path),
            "PYTHONWARNINGS": "ignore",
            "OS_NEUTRON_CONFIG_DIR": str(self.dir),
            "OS_NEUTRON_CONFIG_FILES": "neutron.conf;ml2_conf.ini",
        }

    def schema(self) -> None:
        script = NEUTRON_SCRIPTS / "herd_bed_neutron_schema.py"
        confs = [str(self.dir / "neutron.conf"), str(self.dir / "ml2_conf.ini")]
        argv = [str(venv_python()), str(script), self.database, *confs]
        run_checked(argv, self.logs / "neutron-schema.log", self.env, "neutron schema")

    def service(self) -> Service:
        runner = SCRIPTS / "herd_bed_wsgi.py"
        app = "neutron.wsgi.api:application"
        argv = [str(venv_python()), str(runner), "neutron-api", app, str(self.port)]
        return Service("neutron-api", argv, self.logs / "neutron-api.log", self.env)

    def seed(self) -> Network:
        """The shared flat network ``private`` and its subnet, made as the admin."""
        headers = {"X-Auth-Token": "admin"}
        with httpx.Client(base_url=self.url + "/v2.0", headers=headers, timeout=120) as api:
            network = _made(
                api.post(
                    "/networks",
                    json={
                        "network": {
                            "name": NETWORK,
                            "shared": True,
                            "provider:network_type": "flat",
                            "provider:physical_network": "physnet1",
                        }
                    },
                ),
                "network",
            )
            subnet = _made(
                api.post(
                    "/subnets",
                    json={
                        "subnet": {
                            "name": SUBNET,
                            "network_id": network["id"],
                            "ip_version": 4,
                            "cidr": CIDR,
                        }
                    },
                ),
                "subnet",
            )
        return Network({NETWORK: network["id"]}, {SUBNET: subnet["id"]})


def stub_service(port: int, logs: Path) -> Service:
    """The stand-in of ``neutron_stub.py`` (every list empty)."""
    argv = [sys.executable, str(Path(__file__).with_name("neutron_stub.py")), str(port)]
    return Service("neutron-stub", argv, logs / "neutron-stub.log")


def _made(answer: httpx.Response, kind: str) -> dict[str, Any]:
    if answer.status_code != 201:
        raise BedError(f"neutron: creating the {kind} answered {answer.status_code}: {answer.text}")
    return dict(answer.json()[kind])
