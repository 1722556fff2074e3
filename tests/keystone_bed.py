"""A real Keystone for the tests: from PyPI (``make keystone-bed``), on SQLite, under gunicorn.

:class:`KeystoneBed` makes a Keystone in a temporary directory (its ``keystone.conf``, a
SQLite database, fernet and credential keys), bootstraps it (``keystone-manage
bootstrap``: the ``admin`` user, project and role, with ``member`` and ``reader``
implied by ``admin``) and starts it on a free 127.0.0.1 port with ONE gunicorn worker of one thread:
two workers on one SQLite file fail with "database is locked" while tempest creates
credentials. Then it adds what herd's tests use: the ``service`` project and role, the
``herd`` service user (which validates tokens for keystonemiddleware), and a ``demo``
and an ``other`` project with a member and a reader each.

Without the bed the tests that need it skip, saying how to install it
(:func:`missing_reason`).
"""

from __future__ import annotations

import grp
import os
import pwd
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
BED = Path(os.environ.get("HERD_KEYSTONE_BED", ROOT / ".beds" / "keystone"))
PASSWORD = "secret-pw"  # every user of the bed has it; it is a throwaway test Keystone
REGION = "RegionOne"


def missing_reason() -> str | None:
    """Why the Keystone bed cannot run here (None: it can)."""
    for tool in ("keystone-manage", "gunicorn"):
        if not (BED / "bin" / tool).exists():
            return f"no Keystone bed ({BED / 'bin' / tool} missing): run `make keystone-bed`"
    return None


@dataclass(frozen=True)
class User:
    name: str
    project: str
    id: str = ""
    project_id: str = ""


class KeystoneBed:
    """One Keystone process and its data, in ``workdir``."""

    def __init__(self, workdir: Path, port: int) -> None:
        self.workdir = workdir
        self.port = port
        self.url = f"http://127.0.0.1:{port}/v3"
        self.conf = workdir / "keystone.conf"
        self.log = workdir / "keystone.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.users: dict[str, User] = {}
        self.projects: dict[str, str] = {}
        self.roles: dict[str, str] = {}

    # -- set up and start ---------------------------------------------------------------

    def start(self, timeout: float = 120.0) -> KeystoneBed:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._write_conf()
        user = pwd.getpwuid(os.getuid()).pw_name
        group = grp.getgrgid(os.getgid()).gr_name
        self._manage("db_sync")
        self._manage("fernet_setup", "--keystone-user", user, "--keystone-group", group)
        self._manage("credential_setup", "--keystone-user", user, "--keystone-group", group)
        self._manage(
            "bootstrap",
            "--bootstrap-password",
            PASSWORD,
            "--bootstrap-admin-url",
            self.url,
            "--bootstrap-public-url",
            self.url,
            "--bootstrap-internal-url",
            self.url,
            "--bootstrap-region-id",
            REGION,
        )
        env = {
            **os.environ,
            "OS_KEYSTONE_CONFIG_DIR": str(self.workdir),
            "OS_KEYSTONE_CONFIG_FILES": self.conf.name,
        }
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [
                    str(BED / "bin" / "gunicorn"),
                    "--workers",
                    "1",
                    # one thread too: requests on threads of one worker fail the same way
                    # ("database is locked" on POST /v3/auth/tokens while tempest makes its
                    # accounts and Heat checks tokens), one in a few hundred on a busy machine
                    "--threads",
                    "1",
                    "--bind",
                    f"127.0.0.1:{self.port}",
                    "--timeout",
                    "120",
                    # gunicorn 27's control socket defaults to one path per user, shared
                    # by every gunicorn on the machine
                    "--no-control-socket",
                    "--chdir",
                    str(self.workdir),
                    "keystone_app:application",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=self.workdir,
                start_new_session=True,
            )
        self._wait_until_up(timeout)
        self._populate()
        return self

    def _write_conf(self) -> None:
        # Keystone reads its options from sys.argv too, which holds gunicorn's here
        (self.workdir / "keystone_app.py").write_text(
            "import sys\n"
            "sys.argv = sys.argv[:1]\n"
            "from keystone.wsgi.api import application  # noqa: E402\n"
        )
        keys = self.workdir / "fernet-keys"
        credential_keys = self.workdir / "credential-keys"
        keys.mkdir(exist_ok=True)
        credential_keys.mkdir(exist_ok=True)
        self.conf.write_text(
            "[DEFAULT]\n"
            f"log_file = {self.workdir / 'keystone-app.log'}\n"
            "[database]\n"
            f"connection = sqlite:///{self.workdir / 'keystone.db'}\n"
            "[token]\n"
            "provider = fernet\n"
            "expiration = 7200\n"
            "[fernet_tokens]\n"
            f"key_repository = {keys}\n"
            "[credential]\n"
            f"key_repository = {credential_keys}\n"
            "[cache]\n"
            "enabled = false\n"
            # bcrypt's cheapest cost: tempest makes users and logs in for every test class,
            # and the default (12 rounds) costs a busy machine a second or more each time
            "[identity]\n"
            "password_hash_rounds = 4\n"
        )

    def _manage(self, *args: str) -> None:
        done = subprocess.run(
            [str(BED / "bin" / "keystone-manage"), "--config-file", str(self.conf), *args],
            capture_output=True,
            cwd=self.workdir,
            timeout=300,
        )
        if done.returncode != 0:
            raise RuntimeError(f"keystone-manage {args[0]} failed: {done.stderr.decode()[-3000:]}")

    def _wait_until_up(self, timeout: float) -> None:
        assert self.process is not None
        end = time.time() + timeout
        while time.time() < end:
            if self.process.poll() is not None:
                raise RuntimeError(f"keystone exited: {self.log.read_text()[-3000:]}")
            try:
                if httpx.get(self.url, timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"keystone did not answer: {self.log.read_text()[-3000:]}")

    def _populate(self) -> None:
        admin = self.token("admin", "admin")
        self.roles = {r["name"]: r["id"] for r in self._get(admin, "/roles")["roles"]}
        self.projects = {p["name"]: p["id"] for p in self._get(admin, "/projects")["projects"]}
        self.users["admin"] = User(
            "admin",
            "admin",
            self._get(admin, "/users?name=admin")["users"][0]["id"],
            self.projects["admin"],
        )
        # keystonemiddleware's service user needs the `service` role to validate tokens
        # (Keystone's identity:validate_token rule); bootstrap makes it since Keystone 2024.1
        if "service" not in self.roles:
            self.roles["service"] = self._create(admin, "roles", {"name": "service"})
        for project in ("service", "demo", "other"):
            self.projects[project] = self.create_project(admin, project)
        self.add_user(admin, "herd", "service", "service")
        self.add_user(admin, "alice", "demo", "member")
        self.add_user(admin, "rita", "demo", "reader")
        self.add_user(admin, "bob", "other", "member")

    def create_project(self, admin_token: str, name: str) -> str:
        return self._create(admin_token, "projects", {"name": name, "domain_id": "default"})

    def add_user(self, admin_token: str, name: str, project: str, role: str) -> User:
        user_id = self._create(
            admin_token,
            "users",
            {"name": name, "password": PASSWORD, "domain_id": "default"},
        )
        project_id = self.projects[project]
        self._request(
            admin_token,
            "PUT",
            f"/projects/{project_id}/users/{user_id}/roles/{self.roles[role]}",
        )
        user = User(name, project, user_id, project_id)
        self.users[name] = user
        return user

    def grant(self, admin_token: str, user: User, role: str) -> None:
        """Give ``user`` one more role in its project."""
        self._request(
            admin_token,
            "PUT",
            f"/projects/{user.project_id}/users/{user.id}/roles/{self.roles[role]}",
        )

    # -- the Keystone API -----------------------------------------------------------------

    def token(self, user: str, project: str) -> str:
        """A project-scoped token for ``user`` (password auth)."""
        body = {
            "auth": {
                "identity": {
                    "methods": ["password"],
                    "password": {
                        "user": {
                            "name": user,
                            "domain": {"id": "default"},
                            "password": PASSWORD,
                        }
                    },
                },
                "scope": {"project": {"name": project, "domain": {"id": "default"}}},
            }
        }
        answer = httpx.post(f"{self.url}/auth/tokens", json=body, timeout=60)
        answer.raise_for_status()
        return answer.headers["X-Subject-Token"]

    def register_service(self, name: str, service_type: str, url: str) -> None:
        """Put a service in the catalog, as ``openstack service create`` and ``openstack
        endpoint create`` (public, internal, admin) do."""
        admin = self.token("admin", "admin")
        service_id = self._create(admin, "services", {"name": name, "type": service_type})
        for interface in ("public", "internal", "admin"):
            self._create(
                admin,
                "endpoints",
                {
                    "service_id": service_id,
                    "interface": interface,
                    "url": url,
                    "region_id": REGION,
                },
            )

    def openstack_env(self, user: str, project: str) -> dict[str, str]:
        """The ``OS_*`` variables of a password login, for the openstack CLI."""
        return {
            "OS_AUTH_URL": self.url,
            "OS_AUTH_TYPE": "password",
            "OS_IDENTITY_API_VERSION": "3",
            "OS_USERNAME": user,
            "OS_PASSWORD": PASSWORD,
            "OS_PROJECT_NAME": project,
            "OS_USER_DOMAIN_ID": "default",
            "OS_PROJECT_DOMAIN_ID": "default",
            "OS_REGION_NAME": REGION,
        }

    def herd_env(self) -> dict[str, str]:
        """The settings of ``herd serve --auth keystone`` (its service credentials)."""
        return {
            "HERD_AUTH": "keystone",
            "HERD_KEYSTONE_AUTH_URL": self.url,
            "HERD_KEYSTONE_USERNAME": "herd",
            "HERD_KEYSTONE_PASSWORD": PASSWORD,
            "HERD_KEYSTONE_PROJECT_NAME": "service",
        }

    def _request(self, token: str, method: str, path: str, body: Any = None) -> Any:
        answer = httpx.request(
            method, self.url + path, json=body, headers={"X-Auth-Token": token}, timeout=60
        )
        if answer.status_code >= 400:
            raise RuntimeError(f"{method} {path}: {answer.status_code} {answer.text}")
        return answer.json() if answer.content else None

    def _get(self, token: str, path: str) -> Any:
        return self._request(token, "GET", path)

    def _create(self, token: str, collection: str, fields: dict[str, Any]) -> str:
        singular = collection[:-1] if collection != "policies" else "policy"
        made = self._request(token, "POST", f"/{collection}", {singular: fields})
        return str(made[singular]["id"])

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(5)


@contextmanager
def running_keystone(directory: Path) -> Iterator[KeystoneBed]:
    """A Keystone bed in ``directory`` on a free port, stopped on exit (the e2e modules'
    ``keystone`` fixtures)."""
    from tests.postgres import free_port

    bed = KeystoneBed(directory, free_port())
    try:
        yield bed.start()
    finally:
        bed.stop()
