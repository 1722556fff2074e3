"""Where the bed is installed, and its config files rendered from scripts/nova-bed/*.in."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from string import Template

from tests.nova_bed.rabbit import find_epmd, find_rabbitmq

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / "scripts" / "nova-bed"
DIR_ENV = "NOVA_BED_DIR"
COMPUTE_HOSTS = {"compute1": "az1", "compute2": "az2"}


def bed_dir() -> Path:
    """The install directory: ``NOVA_BED_DIR`` (relative to the repository) or ``.beds/nova``."""
    given = os.environ.get(DIR_ENV, "").strip()
    path = Path(given) if given else Path(".beds/nova")
    return path if path.is_absolute() else REPO / path


def venv_bin() -> Path:
    return bed_dir() / "venv" / "bin"


def not_installed_reason() -> str | None:
    """Why the bed cannot run here, or None when it is installed."""
    stamp = bed_dir() / ".installed"
    if not stamp.exists():
        return f"the Nova bed is not installed ({stamp} missing): run `make nova-bed`"
    for tool in ("nova-manage", "placement-manage", "glance-manage", "gunicorn"):
        if not (venv_bin() / tool).exists():
            return f"the Nova bed in {bed_dir()} lacks {tool}: run `make nova-bed` again"
    if find_rabbitmq() is None or find_epmd() is None:
        return "the Nova bed needs RabbitMQ: Debian package rabbitmq-server (.ci/run installs it)"
    return None


@dataclass(frozen=True)
class Urls:
    transport: str
    placement: str
    glance: str
    neutron: str
    api_db: str
    cell0_db: str
    cell1_db: str
    placement_db: str


def render(template: str, target: Path, **values: object) -> Path:
    text = (SCRIPTS / template).read_text()
    target.write_text(Template(text).substitute({k: str(v) for k, v in values.items()}))
    return target


def write_nova(base: Path, urls: Urls) -> Path:
    """``base/nova``: nova.conf, db.conf, api-paste.ini, and one file per compute host."""
    conf_dir = base / "nova"
    state = conf_dir / "state"
    (state / "lock").mkdir(parents=True, exist_ok=True)
    shutil.copy(SCRIPTS / "api-paste.ini", conf_dir / "api-paste.ini")
    render(
        "nova.conf.in",
        conf_dir / "nova.conf",
        transport_url=urls.transport,
        state_path=state,
        paste_ini=conf_dir / "api-paste.ini",
        placement_url=urls.placement,
        glance_url=urls.glance,
        neutron_url=urls.neutron,
    )
    render("db.conf.in", conf_dir / "db.conf", api_db=urls.api_db, cell1_db=urls.cell1_db)
    # cell0's schema is made beside cell1's: nova-manage db sync --local_cell with this on top
    (conf_dir / "cell0.conf").write_text(f"[database]\nconnection = {urls.cell0_db}\n")
    for host in COMPUTE_HOSTS:
        host_state = conf_dir / f"state-{host}"
        host_state.mkdir(exist_ok=True)
        render("compute.conf.in", conf_dir / f"{host}.conf", host=host, state_path=host_state)
    return conf_dir


def write_placement(base: Path, urls: Urls) -> Path:
    conf_dir = base / "placement"
    conf_dir.mkdir(parents=True, exist_ok=True)
    render("placement.conf.in", conf_dir / "placement.conf", placement_db=urls.placement_db)
    return conf_dir


def write_glance(base: Path, port: int) -> Path:
    conf_dir = base / "glance"
    state = conf_dir / "state"
    for sub in ("images", "staging", "tasks"):
        (state / sub).mkdir(parents=True, exist_ok=True)
    paste = conf_dir / "glance-api-paste.ini"
    shutil.copy(SCRIPTS / "glance-api-paste.ini", paste)
    render(
        "glance-api.conf.in",
        conf_dir / "glance-api.conf",
        port=port,
        state_path=state,
        paste_ini=paste,
    )
    return conf_dir
