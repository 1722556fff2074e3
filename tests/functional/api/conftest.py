"""Fixtures the API tests share (the general ones are in ``tests/conftest.py``)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from tests.conftest import ApiClientFactory

from herd.config import Settings


@pytest.fixture
def token_client(api_client: ApiClientFactory, settings: Settings) -> TestClient:
    """An API client with ``auth: token`` (issue tokens with ``helpers.issue_token``)."""
    return api_client(settings.model_copy(update={"auth": "token"}))
