"""Senlin's own API tests (senlin-tempest-plugin on tempest) against herd, behind a real Keystone.

``make keystone-bed tempest-bed`` installs both. The test starts Keystone, ``herd serve
--auth keystone`` registered in Keystone's catalog as the ``clustering`` service, writes a
``tempest.conf`` that logs in to that Keystone (tempest makes a project and users per
test class, "dynamic credentials"), runs ``tempest run --regex
senlin_tempest_plugin.tests.api`` with a concurrency of 2, reads the results from
stestr's subunit stream and prints the counts. Every test must pass except those in
:data:`EXPECTED_FAILURES` (each with its reason; docs/api.md has the same list).

Five of the plugin's classes make ``os.heat.stack`` profiles and nodes: a Heat
(``make heat-bed``) runs on the same Keystone, in its catalog as ``orchestration``, and herd's
``os.heat.stack`` driver talks to it as alice of project ``demo`` (``HERD_HEAT_CLOUD``).
Without the Heat bed those classes are expected to fail.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.conftest import free_port
from tests.e2e.server import HerdServer
from tests.heat_bed import HeatBed
from tests.heat_bed import missing_reason as heat_missing
from tests.keystone_bed import PASSWORD, REGION, ROOT, KeystoneBed, missing_reason
from tests.nova_bed.fixture import NovaCloud
from tests.postgres import PgServer

TEMPEST_BED = Path(os.environ.get("HERD_TEMPEST_BED", ROOT / ".beds" / "tempest"))


def tempest_missing() -> str | None:
    reason = missing_reason()
    if reason:
        return reason
    if not (TEMPEST_BED / "bin" / "tempest").exists():
        return f"no tempest bed ({TEMPEST_BED}/bin/tempest missing): run `make tempest-bed`"
    return None


pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.timeout(2700),
    pytest.mark.skipif(tempest_missing() is not None, reason=str(tempest_missing())),
]

#: test id pattern (without ``senlin_tempest_plugin.tests.api.``) -> why it may fail here. A
#: test that passes although listed fails this test, so the list only shrinks.
EXPECTED_FAILURES: dict[str, str] = {
    # herd's answers are deliberate differences (docs/api.md)
    r"test_cluster_(add|del)_nodes_params_not_list$": (
        "a string where the node list goes: herd answers \"The value 'node_id' is not a list "
        "for 'nodes'.\"; Senlin split the string into characters and answered \"Items for "
        "'nodes' must be unique\""
    ),
    r"test_policy_(create|validate)_spec_validation_failed$": (
        'an unknown property in a policy spec: herd answers 400 "Unrecognizable spec item '
        "'bogus'\"; the plugin expects Senlin's 500 (a bug there)"
    ),
    r"test_profile_(create|validate)_spec_validation_failed$": (
        "an unknown property in an os.nova.server spec: herd's text names the dotted key, "
        "\"properties.bogus: Unrecognizable spec item 'bogus'\" (every spec error does); Senlin "
        'said "Unrecognizable spec item \'bogus\'", on create after "Failed in creating profile '
        '<name>: "'
    ),
    r"TestClusterActionCompleteLifecycle\.": (
        "complete_lifecycle with the token of an action that has ended (a scale-out that "
        "SUCCEEDED): herd answers 409 \"The action '<id>' is not waiting for lifecycle "
        'completion (status: SUCCEEDED).", Senlin signalled the action whatever its status'
    ),
    # what herd does not provide
    r"TestProfileTypeList\.": (
        "the plugin expects Senlin's whole list of profile types (container.dockerinc.docker "
        "too); herd provides herd.process, herd.sim, os.nova.server and os.heat.stack"
    ),
}

#: the classes whose setUp makes an os.heat.stack profile (and, for two, a node: a stack)
HEAT_CLASSES = (
    r"(TestNodeCreateNegativeBadRequest|TestNodeUpdateNegativeProfileTypeUnmatch"
    r"|TestClusterReplaceNodeNegativeProfileUnmatch|TestClusterAddNodesNegativeProfileTypeUnmatch"
    r"|TestClusterUpdateNegativeProfileTypeUnmatch)\."
)
if heat_missing() is not None:
    EXPECTED_FAILURES[HEAT_CLASSES] = (
        f"the class's setUp makes os.heat.stack profiles and nodes, and there is no Heat: "
        f"{heat_missing()}"
    )


#: test id pattern -> why it may pass or fail here: neither outcome fails this test.
DEPENDS_ON_TIMING: dict[str, str] = {
    r"TestClusterScaleOutNegativeResourceIsLocked\.": (
        "the plugin expects 409 for a second scale-out 5 s after the first, counting on "
        "Senlin's test-only profile metadata 'simulated_wait_time' (its engine slept in each "
        "node operation) to keep the cluster locked; herd has no simulated wait, and answers "
        "Senlin's 409 only while the first scale-out still runs, so the outcome depends on "
        "whether the bed's Nova boots the server in under 5 s (seen both ways)"
    ),
}


def _depends_on_timing(test: str) -> bool:
    return any(re.search(pattern, test) for pattern in DEPENDS_ON_TIMING)


#: tempest's workers. With real servers (Nova and Neutron) the run is bound by the machine:
#: four workers went no faster than two on a busy two-core machine (about 7 tests a minute
#: either way), and their accounts cost Keystone minutes more to make
CONCURRENCY = 2
#: accounts of each kind tempest may hold at once: one per worker, and one to spare
ACCOUNTS = CONCURRENCY + 1


def _accounts(keystone: KeystoneBed, workspace: Path) -> Path:
    """Pre-provisioned credentials (tempest's accounts.yaml): a member and an admin per worker.

    Dynamic credentials would make and delete two projects and two users for each of the
    plugin's ~80 test classes; on a busy two-core machine Keystone spent minutes on that.
    """
    admin = keystone.token("admin", "admin")
    entries = []
    for index in range(ACCOUNTS):
        for kind, role in (("member", "member"), ("admin", "admin")):
            project = f"tempest-{kind}-{index}"
            keystone.projects[project] = keystone.create_project(admin, project)
            keystone.add_user(admin, f"tempest-{kind}-{index}", project, role)
            extra = "  types: ['admin']\n" if kind == "admin" else "  roles: ['member']\n"
            entries.append(
                f"- username: 'tempest-{kind}-{index}'\n"
                f"  project_name: '{project}'\n"
                f"  password: '{PASSWORD}'\n"
                "  domain_name: 'Default'\n" + extra
            )
    path = workspace / "etc" / "accounts.yaml"
    path.write_text("".join(entries))
    return path


def _tempest_conf(keystone: KeystoneBed, workspace: Path, accounts: Path | None) -> str:
    if accounts is None:
        credentials = "use_dynamic_credentials = True\n"
    else:
        credentials = (
            f"use_dynamic_credentials = False\ntest_accounts_file = {accounts}\n"
            "default_credentials_domain_name = Default\n"
        )
    # the accounts' lock files in the workspace: tempest's default, /tmp/tempest-lock, keeps
    # those of a run that was killed, and the next run finds every account "in use"
    return f"""[DEFAULT]
log_file = {workspace / "tempest.log"}
debug = False

[oslo_concurrency]
lock_path = {workspace / "locks"}

[auth]
admin_username = admin
admin_password = {PASSWORD}
admin_project_name = admin
admin_domain_name = Default
{credentials}create_isolated_networks = False
tempest_roles = member

[identity]
uri_v3 = {keystone.url}
auth_version = v3
region = {REGION}
v3_endpoint_type = public

[identity-feature-enabled]
api_v2 = False
api_v3 = True

[service_available]
senlin = True
nova = False
neutron = False
glance = False
cinder = False
swift = False
zaqar = False
octavia = False

[clustering]
catalog_type = clustering
min_microversion = 1.0
max_microversion = 1.14
wait_timeout = 120
"""


def _clouds_yaml(nova_clouds: str, keystone: KeystoneBed, path: Path) -> Path:
    """The Nova bed's clouds.yaml (JSON) with one more entry, ``herd-heat``: alice of project
    ``demo`` in the tempest Keystone, where Heat is."""
    clouds = json.loads(Path(nova_clouds).read_text())
    clouds["clouds"]["herd-heat"] = {
        "auth": {
            "auth_url": keystone.url,
            "username": "alice",
            "password": PASSWORD,
            "project_name": "demo",
            "user_domain_id": "default",
            "project_domain_id": "default",
        },
        "region_name": REGION,
        "identity_api_version": 3,
    }
    path.write_text(json.dumps(clouds, indent=2) + "\n")
    return path


@pytest.fixture(scope="module")
def stack(
    tmp_path_factory: pytest.TempPathFactory, nova_cloud: NovaCloud, pg_server: PgServer
) -> Iterator[tuple[KeystoneBed, HerdServer]]:
    bed = nova_cloud.info
    if bed.neutron_missing:
        # the plugin's os.nova.server spec names network 'private': without a Neutron that
        # has it, half of the plugin's tests could not run
        pytest.skip(bed.neutron_missing)
    keystone = KeystoneBed(tmp_path_factory.mktemp("keystone"), free_port())
    server = HerdServer(tmp_path_factory.mktemp("herd") / "data", free_port())
    server.env = keystone.herd_env() | {
        "OS_CLIENT_CONFIG_FILE": bed.clouds_yaml,
        "HERD_NOVA_CLOUD": bed.cloud_name,
        "HERD_NOVA_TIMEOUT": "120",
        "HERD_NOVA_NOTIFICATIONS_URL": bed.transport_url,
    }
    heat: HeatBed | None = None
    database = ""
    try:
        keystone.start()
        if heat_missing() is None:
            # heat-api and heat-engine on one SQLite file see "database is locked"
            database = pg_server.create_database(migrated=False)
            heat = HeatBed(tmp_path_factory.mktemp("heat"), keystone, pg_server.url_for(database))
            heat.start()
            clouds = _clouds_yaml(bed.clouds_yaml, keystone, keystone.workdir / "clouds.yaml")
            server.env |= {"OS_CLIENT_CONFIG_FILE": str(clouds), "HERD_HEAT_CLOUD": "herd-heat"}
        server.start()
        keystone.register_service("herd", "clustering", server.url)
        yield keystone, server
    finally:
        server.stop()
        if heat is not None:
            heat.stop()
        if database:
            pg_server.drop_database(database)
        keystone.stop()


def _results(workspace: Path) -> dict[str, str]:
    """Test id -> status (success, fail, skip) of the last run, from stestr's subunit."""
    stream = subprocess.run(
        [str(TEMPEST_BED / "bin" / "stestr"), "last", "--subunit"],
        cwd=workspace,
        capture_output=True,
        check=False,
    ).stdout
    # subunit2csv exits 1 when the stream holds a failure: its output is what counts
    rows = subprocess.run(
        [str(TEMPEST_BED / "bin" / "subunit2csv"), "--no-passthrough"],
        input=stream,
        capture_output=True,
        check=False,
    ).stdout.decode()
    results: dict[str, str] = {}
    for row in csv.DictReader(io.StringIO(rows)):
        test = re.sub(r"\[.*\]$", "", row["test"])
        if test.startswith("senlin_tempest_plugin."):
            results[test] = row["status"]
    return results


def _expected_failure(test: str) -> str | None:
    short = test.removeprefix("senlin_tempest_plugin.tests.api.")
    for pattern, reason in EXPECTED_FAILURES.items():
        if re.search(pattern, short):
            return reason
    return None


def verdict(results: dict[str, str]) -> tuple[list[str], list[str]]:
    """The failures not listed, and the listed tests that passed (subunit's statuses:
    ``success``, ``failure``, ``skip``)."""
    unexpected = sorted(
        t
        for t, status in results.items()
        if status == "failure" and not _expected_failure(t) and not _depends_on_timing(t)
    )
    fixed = sorted(
        t
        for t, status in results.items()
        if status == "success" and _expected_failure(t) and not _depends_on_timing(t)
    )
    return unexpected, fixed


def test_senlin_api_tests_pass(stack: tuple[KeystoneBed, HerdServer], tmp_path: Path) -> None:
    keystone, _herd = stack
    tempest = str(TEMPEST_BED / "bin" / "tempest")
    workspace = tmp_path / "tempest"
    # no `tempest init`: it registers every workspace in ~/.tempest, by name. With
    # --config-file, `tempest run` writes the .stestr.conf it needs itself.
    (workspace / "etc").mkdir(parents=True)
    conf = _tempest_conf(keystone, workspace, _accounts(keystone, workspace))
    (workspace / "etc" / "tempest.conf").write_text(conf)
    # the workspace's configuration, whatever /etc/tempest holds on this machine
    env = os.environ | {
        "TEMPEST_CONFIG_DIR": str(workspace / "etc"),
        "TEMPEST_CONFIG": "tempest.conf",
        # the plugin's client polls every 0.5 s instead of 5 (tempest_shim/sitecustomize.py)
        "PYTHONPATH": str(Path(__file__).with_name("tempest_shim")),
    }
    run = subprocess.run(
        [
            tempest,
            "run",
            "--config-file",
            str(workspace / "etc" / "tempest.conf"),
            "--regex",
            "senlin_tempest_plugin.tests.api",
            "--concurrency",
            str(CONCURRENCY),
        ],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=2100,
        env=env,
    )
    (tmp_path / "tempest-run.txt").write_text(run.stdout + run.stderr)
    results = _results(workspace)
    counts = Counter(results.values())
    print(f"\nSENLIN TEMPEST {dict(counts)} of {len(results)} (output: {tmp_path})")
    assert len(results) >= 300, (
        f"tempest ran too few tests: {run.stdout[-3000:]}{run.stderr[-3000:]}"
    )
    # measured with the real Neutron (2026-11-27): 280 passed, 18 failed (2 fixed since), 2
    # skipped; with the Heat bed and os.heat.stack (2026-11-28): 295 passed, 9 failed (the 9
    # listed), 2 skipped, the timing-dependent test among the passes. It may only grow.
    assert counts["success"] >= 294, counts
    unexpected, fixed = verdict(results)
    for test in unexpected:
        print("FAIL", test)
    assert not unexpected, f"{len(unexpected)} Senlin API tests failed: {unexpected}"
    assert not fixed, f"these pass now: take them off EXPECTED_FAILURES: {fixed}"
