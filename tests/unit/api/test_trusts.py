"""Making trusts (``api/trusts.py``) against a Keystone stand-in on 127.0.0.1.

The stand-in (tests/loopback.py: Keystone is outside this unit) answers herd's service
login and the trust requests as Keystone does; the real Keystone makes, reuses and
replaces trusts in tests/e2e/test_nova_trusts.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from tests.loopback import answer_json, serving

from herd.api.trusts import TrustMaker
from herd.config import Settings
from herd.errors import Forbidden, ServiceUnavailable


class Keystone(BaseHTTPRequestHandler):
    seen: list[tuple[str, str, Any]] = []
    trust_status = 201

    def _answer(self, status: int, body: dict[str, Any]) -> None:
        answer_json(self, status, body)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        self.seen.append((self.path, self.headers.get("X-Auth-Token") or "", body))
        if self.path.endswith("/auth/tokens"):
            self._answer(201, {"token": {"user": {"id": "herd-user-id"}}})
        elif self.trust_status == 201:
            self._answer(201, {"trust": {"id": "trust-1"}})
        else:
            message = "Cannot create a trust with a trust-scoped token."
            self._answer(self.trust_status, {"error": {"code": 403, "message": message}})

    def do_GET(self) -> None:
        self.seen.append((self.path, self.headers.get("X-Auth-Token") or "", None))
        if self.path.endswith("/gone"):
            self._answer(404, {"error": {"code": 404, "message": "Could not find trust: gone."}})
        else:
            self._answer(200, {"trust": {"id": self.path.rsplit("/", 1)[1]}})

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def keystone() -> Iterator[str]:
    Keystone.seen = []
    Keystone.trust_status = 201
    with serving(Keystone) as url:
        yield f"{url}/v3"


def _maker(url: str, tmp_path: Path) -> TrustMaker:
    return TrustMaker(
        Settings(data_dir=tmp_path, auth="keystone", keystone_auth_url=url, keystone_password="pw")
    )


def test_a_trust_is_made_with_the_callers_token_for_herds_service_user(
    keystone: str, tmp_path: Path
) -> None:
    maker = _maker(keystone, tmp_path)
    assert maker.create("user-token", "u-1", "p-1", ("member", "reader")) == "trust-1"
    assert maker.create("user-token", "u-2", "p-1", ("member",)) == "trust-1"
    logins = [seen for seen in Keystone.seen if seen[0].endswith("/auth/tokens")]
    assert len(logins) == 1  # herd's own user id is asked once
    path, token, body = Keystone.seen[1]
    assert path == "/v3/OS-TRUST/trusts" and token == "user-token"
    assert body == {
        "trust": {
            "trustor_user_id": "u-1",
            "trustee_user_id": "herd-user-id",
            "project_id": "p-1",
            "impersonation": True,
            "allow_redelegation": True,  # Heat makes its own trust from herd's
            "roles": [{"name": "member"}, {"name": "reader"}],
        }
    }


def test_keystone_refusing_the_trust_is_a_403_naming_user_project_and_reason(
    keystone: str, tmp_path: Path
) -> None:
    Keystone.trust_status = 403
    with pytest.raises(Forbidden) as caught:
        _maker(keystone, tmp_path).create("user-token", "u-1", "p-1", ("member",))
    assert str(caught.value) == (
        "herd could not get a Keystone trust from user u-1 in project p-1 to act for them on "
        "Nova: Cannot create a trust with a trust-scoped token. (HTTP 403)"
    )


def test_only_keystones_404_says_a_stored_trust_is_gone(keystone: str, tmp_path: Path) -> None:
    maker = _maker(keystone, tmp_path)
    assert maker.exists("user-token", "trust-1")
    assert not maker.exists("user-token", "gone")
    assert Keystone.seen[-1][1] == "user-token"  # asked as the trustor


def test_keystone_away_is_a_503(tmp_path: Path) -> None:
    maker = _maker("http://127.0.0.1:9/v3", tmp_path)
    with pytest.raises(ServiceUnavailable, match="Keystone could not be asked for a trust"):
        maker.create("user-token", "u-1", "p-1", ("member",))
