"""The Nova bed's paste filter (scripts/nova-bed/herd_bed_auth.py): the token is the caller.

Nova's ``keystonecontext`` builds its request context from the headers this filter sets, so a
wrong header here would make every bed test run as the wrong user or project.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "nova-bed" / "herd_bed_auth.py"


@pytest.fixture(scope="module")
def bed_auth() -> Any:
    spec = importlib.util.spec_from_file_location("herd_bed_auth", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _headers_seen(bed_auth: Any, environ: dict[str, Any]) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    def app(env: dict[str, Any], start_response: Any) -> list[bytes]:
        seen.update(env)
        return [b""]

    bed_auth.filter_factory({})(app)(environ, lambda *a: None)
    return seen


@pytest.mark.parametrize(
    ("token", "user", "project", "roles"),
    [
        (None, "admin", "admin", "admin,member,reader"),
        ("admin", "admin", "admin", "admin,member,reader"),
        ("alice:p1", "alice", "p1", "member,reader"),
        ("bob:p2:reader", "bob", "p2", "reader"),
        ("carol", "carol", "carol", "member,reader"),
    ],
)
def test_the_token_names_user_project_and_roles(
    bed_auth: Any, token: str | None, user: str, project: str, roles: str
) -> None:
    environ = {} if token is None else {"HTTP_X_AUTH_TOKEN": token}
    seen = _headers_seen(bed_auth, environ)
    assert seen["HTTP_X_USER_ID"] == user
    assert seen["HTTP_X_PROJECT_ID"] == seen["HTTP_X_TENANT_ID"] == project
    assert seen["HTTP_X_ROLES"] == roles
    assert seen["HTTP_X_IDENTITY_STATUS"] == "Confirmed"
    # Glance and Neutron get the caller's token from Nova: there must always be one
    assert seen["HTTP_X_AUTH_TOKEN"] == (token or "admin")


def test_identity_headers_sent_by_the_client_are_replaced(bed_auth: Any) -> None:
    seen = _headers_seen(
        bed_auth,
        {
            "HTTP_X_AUTH_TOKEN": "alice:p1",
            "HTTP_X_ROLES": "admin",
            "HTTP_X_PROJECT_ID": "other",
            "HTTP_X_SERVICE_CATALOG": "[]",
        },
    )
    assert seen["HTTP_X_ROLES"] == "member,reader"
    assert seen["HTTP_X_PROJECT_ID"] == "p1"
    assert "HTTP_X_SERVICE_CATALOG" not in seen
