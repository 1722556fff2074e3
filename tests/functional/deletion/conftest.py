from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from tests.conftest import ApiClientFactory
from tests.functional.api.helpers import services
from tests.functional.deletion.support import issue_tokens

from herd.config import Settings


class Callers:
    """An API client with one header set per role (admin, member, agent) of project p1."""

    def __init__(self, client: TestClient, headers: dict[str, dict[str, str]]) -> None:
        self.client = client
        self.admin = headers["admin"]
        self.member = headers["member"]
        self.agent = headers["agent"]


@pytest.fixture
def token_settings(db_url: str, tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data", db_url=db_url, run_engine=False, auth="token")


@pytest.fixture
def callers(api_client: ApiClientFactory, token_settings: Settings) -> Callers:
    client = api_client(token_settings)
    return Callers(client, issue_tokens(services(client).database))
