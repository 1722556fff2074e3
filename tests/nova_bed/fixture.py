"""The ``nova_cloud`` fixture: ONE Nova bed per test run, shared by every xdist worker.

Chosen over "all Nova tests in one file" so that the driver's tests, the end-to-end tests and
the bench may each live where they belong: the first test that asks starts the bed (about a
minute) under a file lock, the others wait for it and reuse it, the controller stops it at the
end (``tests/nova_bed/control.py`` says how). A worker that collects a test using the fixture
starts the bed right after collection, so its start overlaps other tests. Tests share the
cloud: each one names its servers uniquely and counts only its own. The first Nova test may
wait for the whole start-up: Nova test modules set ``pytest.mark.timeout(900)``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.nova_bed import control
from tests.nova_bed.bed import BedInfo
from tests.nova_bed.configs import not_installed_reason
from tests.nova_bed.processes import BedError


@dataclass(frozen=True)
class NovaCloud:
    """What a client of the bed needs."""

    info: BedInfo

    @property
    def clouds_yaml(self) -> Path:
        return Path(self.info.clouds_yaml)

    @property
    def cloud_name(self) -> str:
        return self.info.cloud_name

    @property
    def config(self) -> dict[str, Any]:
        """The cloud's entry of clouds.yaml (auth_type admin_token, endpoint overrides)."""
        return dict(self.info.cloud)

    @property
    def env(self) -> dict[str, str]:
        """``OS_CLIENT_CONFIG_FILE`` and ``OS_CLOUD`` naming the bed, for processes."""
        return {"OS_CLIENT_CONFIG_FILE": str(self.clouds_yaml), "OS_CLOUD": self.cloud_name}

    def connect(self, **overrides: Any) -> Any:
        """A new openstacksdk connection to the bed (admin in project ``admin``)."""
        import openstack

        return openstack.connect(
            load_yaml_config=False, load_envvars=False, **{**self.config, **overrides}
        )

    @property
    def image(self) -> str:
        return "cirros-0.6.2-x86_64-disk"

    @property
    def flavor(self) -> str:
        return "m1.tiny"

    @property
    def too_big_flavor(self) -> str:
        return "m1.toobig"


# A bed started by hand (``python -m tests.nova_bed up --root DIR``): the tests use it and
# leave it running, which saves its minute of start-up on every run while writing tests.
ROOT_ENV = "HERD_TEST_NOVA_BED_ROOT"


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def bed_root(config: pytest.Config) -> Path:
    """``<the controller's basetemp>/nova-bed`` (a worker's basetemp is a child of it)."""
    factory = config._tmp_path_factory  # type: ignore[attr-defined]
    basetemp = Path(factory.getbasetemp())
    return (basetemp.parent if _is_worker(config) else basetemp) / "nova-bed"


def _root_and_watch(config: pytest.Config) -> tuple[Path, int | None]:
    given = os.environ.get(ROOT_ENV)
    if given:
        return Path(given), None
    return bed_root(config), os.getppid() if _is_worker(config) else os.getpid()


def start_early(session: pytest.Session) -> None:
    """After collection: start the bed in the background if a collected test will want it.

    Its start-up (a minute or two) then overlaps the other tests instead of being waited for
    by the first Nova test.
    """
    if not_installed_reason() is not None:
        return
    # a test marked `nova` may ask for the bed only later (getfixturevalue), e.g. after
    # starting its own Keystone meanwhile (tests/e2e/test_nova_trusts.py)
    if any(
        "nova_cloud" in getattr(item, "fixturenames", ()) or item.get_closest_marker("nova")
        for item in session.items
    ):
        root, watch = _root_and_watch(session.config)
        control.start(root, watch)


@pytest.fixture(scope="session")
def nova_cloud(request: pytest.FixtureRequest) -> NovaCloud:
    """The run's Nova bed; skips saying why when it is not installed or cannot start."""
    reason = not_installed_reason()
    if reason:
        pytest.skip(reason)
    root, watch = _root_and_watch(request.config)
    try:
        info = control.ensure(root, watch_pid=watch)
    except BedError as exc:
        pytest.skip(f"the Nova bed could not start: {exc}")
    return NovaCloud(info)


def stop_shared_bed(config: pytest.Config) -> None:
    """At the end of the run (controller or lone process): stop the bed if one was started."""
    if _is_worker(config) or os.environ.get(ROOT_ENV):
        return
    factory = getattr(config, "_tmp_path_factory", None)
    if factory is None or getattr(factory, "_basetemp", None) is None:
        return  # no test made a basetemp, so none started a bed
    control.stop(bed_root(config))
