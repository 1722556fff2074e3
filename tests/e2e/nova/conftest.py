"""The Nova e2e tests' fixtures: the run's shared Nova bed, openstacksdk on it, one herd.

A module narrows ``bed`` to skip (saying why) where it needs more of the bed (Neutron, two
regions); ``herd`` is then served against the narrowed bed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlparse

import httpx
import pytest
from tests.e2e.nova.herd_api import V, herd_server
from tests.nova_bed.bed import BedInfo
from tests.nova_bed.fixture import NovaCloud


@pytest.fixture(scope="module")
def bed(nova_cloud: NovaCloud) -> BedInfo:
    """The run's shared Nova bed (tests/nova_bed/fixture.py); skipped, saying why, without it."""
    return nova_cloud.info


@pytest.fixture(scope="module")
def nova(nova_cloud: NovaCloud) -> Any:
    """openstacksdk on the bed: what the tests check Nova's own lists with."""
    return nova_cloud.connect()


@pytest.fixture(scope="module")
def herd(bed: BedInfo, tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    """One ``herd serve`` for the module, its Nova driver on the bed."""
    server = herd_server(bed, tmp_path_factory.mktemp("herd") / "data").start()
    with httpx.Client(base_url=server.url, headers=V, timeout=60) as client:
        yield client
    server.stop()
    secret = urlparse(bed.transport_url).password
    assert not secret or secret not in server.log.read_text()  # the bus password is never logged
