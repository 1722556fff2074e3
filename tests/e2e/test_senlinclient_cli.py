"""python-senlinclient's ``openstack cluster ...`` commands against a real ``herd serve``.

Every command the installed plugin provides (entry points ``openstack.clustering.v1``)
is run with a ``herd.sim`` profile and a deletion policy, and its output asserted. The
last assertion compares the commands run with the plugin's list, so a command a new
client adds is a failure that names it. The CLI reaches herd with
``--os-auth-type none --os-endpoint <url>/v1`` (keystoneauth's ``none`` plugin; the
senlinclient plugin asks for microversion 1.14 itself).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from tests.e2e.server import HerdServer
from tests.waiting import wait_for_action

pytestmark = pytest.mark.e2e

OPENSTACK = str(Path(sys.executable).parent / "openstack")
RUNNER = Path(__file__).with_name("osc_runner.py")
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
SIM_SPEC = {"type": "herd.sim", "version": "1.0", "properties": {}}
SLOW_SPEC = {"type": "herd.sim", "version": "1.0", "properties": {"create_latency": 8}}
BUSY_SPEC = {"type": "herd.sim", "version": "1.0", "properties": {"create_latency": 3}}
BATCH_SPEC = {
    "type": "senlin.policy.batch",
    "version": "1.0",
    "properties": {"min_in_service": 1, "max_batch_size": 1, "pause_time": 0},
}
DOCKER_SPEC = {
    "type": "container.dockerinc.docker",
    "version": "1.0",
    "properties": {"image": "nginx"},
}
DELETION_SPEC = {
    "type": "senlin.policy.deletion",
    "version": "1.1",
    "properties": {"criteria": "OLDEST_FIRST", "destroy_after_deletion": True},
}

#: commands herd deliberately does not support (docs/api.md, "python-senlinclient")
UNSUPPORTED = {
    # ssh into every member's floating address: herd nodes have no network addresses
    "cluster run": "'addresses'",
}


def plugin_commands() -> set[str]:
    return {entry.name.replace("_", " ") for entry in entry_points(group="openstack.clustering.v1")}


class OpenStackCli:
    """Runs ``openstack`` commands against one server and notes which commands ran.

    Commands go to one long-lived ``osc_runner`` interpreter (the console script's own
    ``main``, imported once); :meth:`console_script` runs the real ``openstack`` script.
    """

    def __init__(self, server: HerdServer, tmp_path: Path) -> None:
        self.server = server
        self.tmp_path = tmp_path
        self.ran: set[str] = set()
        self.env = {key: value for key, value in os.environ.items() if not key.startswith("OS_")}
        self.env.update(HOME=str(tmp_path), COLUMNS="200")
        self.auth = ["--os-auth-type", "none", "--os-endpoint", f"{server.url}/v1"]
        self.runner = subprocess.Popen(
            [sys.executable, str(RUNNER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=self.env,
            cwd=tmp_path,
        )

    def close(self) -> None:
        assert self.runner.stdin is not None
        self.runner.stdin.close()
        self.runner.wait(30)

    def console_script(
        self, command: str, *args: str, **env: str
    ) -> subprocess.CompletedProcess[str]:
        """The real ``openstack`` script, with the endpoint in the environment instead."""
        self.ran.add(command)
        result = subprocess.run(
            [OPENSTACK, *command.split(), *args],
            capture_output=True,
            text=True,
            timeout=120,
            env={**self.env, "OS_AUTH_TYPE": "none", "OS_ENDPOINT": f"{self.server.url}/v1", **env},
            cwd=self.tmp_path,
        )
        assert result.returncode == 0, result.stdout + result.stderr
        return result

    def __call__(
        self, command: str, *args: str, ok: bool = True
    ) -> subprocess.CompletedProcess[str]:
        self.ran.add(command)
        argv = [*self.auth, *command.split(), *args]
        assert self.runner.stdin is not None and self.runner.stdout is not None
        self.runner.stdin.write(json.dumps(argv) + "\n")
        self.runner.stdin.flush()
        line = self.runner.stdout.readline()
        assert line, f"the osc runner died during {command} {args}"
        answer = json.loads(line)
        result = subprocess.CompletedProcess(argv, answer["rc"], answer["stdout"], answer["stderr"])
        if ok:
            assert result.returncode == 0, f"{command} {args}: {result.stdout}{result.stderr}"
            assert "Traceback" not in result.stderr, result.stderr
        return result

    def json(self, command: str, *args: str) -> Any:
        return json.loads(self(command, *args, "-f", "json").stdout)

    def fails(self, command: str, *args: str) -> str:
        result = self(command, *args, ok=False)
        assert result.returncode != 0, f"{command} {args} succeeded: {result.stdout}"
        assert "Traceback" not in result.stderr, result.stderr
        return result.stdout + result.stderr

    def spec(self, name: str, spec: dict[str, Any]) -> str:
        path = self.tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump(spec))
        return str(path)


def _wait(server: HerdServer, action_id: str) -> dict[str, Any]:
    with httpx.Client(base_url=server.url) as client:
        return wait_for_action(client, action_id)


def _accepted(server: HerdServer, output: str, status: str = "SUCCEEDED") -> dict[str, Any]:
    """Wait for the action the command printed ('... accepted by action <id>')."""
    assert "accepted by action" in output, output
    match = UUID.search(output.split("accepted by action", 1)[1])
    assert match, output
    action = _wait(server, match.group(0))
    assert action["status"] == status, action["status_reason"]
    return action


def _latest(server: HerdServer, target: str, name: str) -> dict[str, Any]:
    actions = httpx.get(
        f"{server.url}/v1/actions", params={"target": target, "action": name}
    ).json()["actions"]
    assert actions, f"no {name} on {target}"
    return _wait(server, actions[-1]["id"])


@pytest.fixture
def foreign_process() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(
        [sys.executable, "-c", "import time\nwhile True: time.sleep(0.1)"],
        start_new_session=True,
    )
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()


def test_every_openstack_cluster_command(
    herd_server: HerdServer, tmp_path: Path, foreign_process: subprocess.Popen[bytes]
) -> None:
    osc = OpenStackCli(herd_server, tmp_path)
    try:
        _walk(osc, herd_server, tmp_path, foreign_process)
    finally:
        osc.close()
    missing = plugin_commands() - osc.ran
    assert not missing, f"openstack cluster commands this test does not run: {sorted(missing)}"


def _walk(
    osc: OpenStackCli,
    herd_server: HerdServer,
    tmp_path: Path,
    foreign_process: subprocess.Popen[bytes],
) -> None:
    url = herd_server.url
    started = time.monotonic()

    # -- service, build info, types --------------------------------------------------------
    info = json.loads(osc.console_script("cluster build info", "-f", "json").stdout)
    api = json.loads(info["api"]) if isinstance(info["api"], str) else info["api"]
    assert api["version"] and api["revision"].startswith(api["version"])
    services = osc.json("cluster service list")
    assert {s["binary"] for s in services} == {"herd-engine", "herd-api"}
    assert {s["state"] for s in services} == {"up"}
    types = osc.json("cluster profile type list")
    # from 1.5 a type's name has no version (Senlin's; the version is its own field)
    names = [t["name"] for t in types]
    assert names == sorted(names)
    assert set(names) == {"herd.process", "herd.sim", "os.heat.stack", "os.nova.server"}
    shown = osc.json("cluster profile type show", "herd.sim-1.0")
    assert shown["name"] == "herd.sim-1.0" and "create_latency" in shown["schema"]
    ops = osc.json("cluster profile type ops", "herd.process-1.0")["operations"]
    assert set(ops) == {"reboot", "stop", "start", "signal", "pause", "unpause"}
    policy_types = {(t["name"], t.get("version")) for t in osc.json("cluster policy type list")}
    assert {
        ("senlin.policy.deletion", "1.1"),
        ("senlin.policy.batch", "1.0"),
        ("senlin.policy.affinity", "1.0"),
        ("senlin.policy.health", "1.2"),
    } <= policy_types
    deletion_type = osc.json("cluster policy type show", "senlin.policy.deletion-1.1")
    assert "criteria" in deletion_type["schema"]

    # -- profiles and policies -------------------------------------------------------------
    sim_file = osc.spec("sim", SIM_SPEC)
    assert osc.json("cluster profile validate", "--spec-file", sim_file)["type"] == "herd.sim-1.0"
    profile = osc.json("cluster profile create", "--spec-file", sim_file, "sim")
    assert profile["type"] == "herd.sim-1.0"
    slow = osc.json("cluster profile create", "--spec-file", osc.spec("slow", SLOW_SPEC), "slow")
    assert slow["name"] == "slow"
    message = osc.fails("cluster profile create", "--spec-file", osc.spec("dock", DOCKER_SPEC), "n")
    assert "(container.dockerinc.docker-1.0) is not supported" in message
    assert (
        "Supported types: herd.process-1.0, herd.sim-1.0, os.heat.stack-1.0, os.nova.server-1.0"
        in message
    )
    assert osc.json("cluster profile show", "sim")["id"] == profile["id"]
    assert {p["name"] for p in osc.json("cluster profile list")} == {"sim", "slow"}
    updated = osc.json("cluster profile update", "--name", "sim2", "--metadata", "team=a", "sim")
    assert updated["name"] == "sim2"
    del_file = osc.spec("del", DELETION_SPEC)
    assert osc.json("cluster policy validate", "--spec-file", del_file)["type"] == (
        "senlin.policy.deletion-1.1"
    )
    policy = osc.json("cluster policy create", "--spec-file", del_file, "del")
    assert osc.json("cluster policy show", "del")["id"] == policy["id"]
    assert [p["name"] for p in osc.json("cluster policy list")] == ["del"]
    assert osc.json("cluster policy update", "--name", "deletion", "del")["name"] == "deletion"

    # -- a cluster -------------------------------------------------------------------------
    created = osc.json(
        "cluster create",
        "--profile",
        "sim2",
        "--desired-capacity",
        "2",
        "--max-size",
        "6",
        "--metadata",
        "tier=web",
        "web",
    )
    assert _latest(herd_server, created["id"], "CLUSTER_CREATE")["status"] == "SUCCEEDED"
    cluster = osc.json("cluster show", "web")
    assert cluster["status"] == "ACTIVE" and cluster["desired_capacity"] == 2
    assert [c["name"] for c in osc.json("cluster list")] == ["web"]
    osc("cluster update", "--timeout", "120", "web")
    assert _latest(herd_server, created["id"], "CLUSTER_UPDATE")["status"] == "SUCCEEDED"
    assert osc.json("cluster show", "web")["timeout"] == 120
    assert len(osc.json("cluster members list", "web")) == 2

    # A rolling update under the batch policy, then a profile-only update (issue 25).
    def member_profiles() -> set[str]:
        ids = [m["id"] for m in osc.json("cluster members list", "--full-id", "web")]
        return {osc.json("cluster node show", node)["profile_id"] for node in ids}

    batch = osc.json("cluster policy create", "--spec-file", osc.spec("batch", BATCH_SPEC), "b")
    _accepted(herd_server, osc("cluster policy attach", "--policy", "b", "web").stdout)
    sim3 = osc.json("cluster profile create", "--spec-file", sim_file, "sim3")
    osc("cluster update", "--profile", "sim3", "web")
    rolled = _latest(herd_server, created["id"], "CLUSTER_UPDATE")
    assert rolled["status"] == "SUCCEEDED", rolled["status_reason"]
    assert [len(b) for b in rolled["data"]["update"]["plan"]] == [1, 1]  # one member at a time
    assert rolled["owner"] is None  # a finished action belongs to no engine
    assert member_profiles() == {sim3["id"]}
    osc("cluster update", "--profile", "sim2", "--profile-only", "true", "web")
    assert _latest(herd_server, created["id"], "CLUSTER_UPDATE")["status"] == "SUCCEEDED"
    assert osc.json("cluster show", "web")["profile_id"] == profile["id"]
    assert member_profiles() == {sim3["id"]}  # the members keep theirs (Senlin's profile_only)
    _accepted(herd_server, osc("cluster policy detach", "--policy", "b", "web").stdout)
    osc("cluster policy delete", "--force", batch["id"])

    out = osc("cluster policy attach", "--policy", "deletion", "web").stdout
    _accepted(herd_server, out)
    (binding,) = osc.json("cluster policy binding list", "web")
    assert binding["policy_name"] == "deletion" and binding["is_enabled"] is True
    assert (
        osc.json("cluster policy binding show", "--policy", "deletion", "web")["policy_id"]
        == (policy["id"])
    )
    updated_binding = osc(
        "cluster policy binding update", "--policy", "deletion", "--enabled", "false", "web"
    )
    _accepted(herd_server, updated_binding.stdout)
    assert (
        osc.json("cluster policy binding show", "--policy", "deletion", "web")["is_enabled"]
        is False
    )

    _accepted(herd_server, osc("cluster expand", "--count", "2", "web").stdout)
    _accepted(herd_server, osc("cluster shrink", "--count", "1", "web").stdout)
    _accepted(herd_server, osc("cluster resize", "--capacity", "2", "web").stdout)
    assert osc.json("cluster show", "web")["desired_capacity"] == 2
    _accepted(herd_server, osc("cluster check", "web").stdout)
    _accepted(herd_server, osc("cluster recover", "--check", "true", "web").stdout)
    out = osc("cluster op", "--operation", "signal", "--params", "signal=SIGHUP", "web").stdout
    assert "Request accepted by action" in out
    action = _accepted(herd_server, out)
    assert action["action"] == "CLUSTER_OPERATION"
    names = osc.json("cluster collect", "--path", "name", "web")
    members = osc.json("cluster members list", "--full-id", "web")
    assert sorted(n["attr_value"] for n in names) == sorted(m["name"] for m in members)

    # -- nodes -----------------------------------------------------------------------------
    spare = osc.json("cluster node create", "--profile", "sim2", "--role", "spare", "spare")
    assert _latest(herd_server, spare["id"], "NODE_CREATE")["status"] == "SUCCEEDED"
    assert {n["name"] for n in osc.json("cluster node list")} >= {"spare"}
    detail = osc.json("cluster node show", "--details", "spare")
    assert detail["status"] == "ACTIVE" and detail["role"] == "spare"
    osc("cluster node update", "--role", "standby", "spare")
    assert _latest(herd_server, spare["id"], "NODE_UPDATE")["status"] == "SUCCEEDED"
    assert osc.json("cluster node show", "spare")["role"] == "standby"
    _accepted(herd_server, osc("cluster node check", "spare").stdout)
    _accepted(herd_server, osc("cluster node recover", "--check", "true", "spare").stdout)
    # python-senlinclient 3.1.0's NodeOp is a Lister that returns nothing: after printing the
    # accepted action, cliff fails on the missing columns (the same against Senlin).
    result = osc("cluster node op", "--operation", "reboot", "spare", ok=False)
    assert result.stderr.strip() == "cannot unpack non-iterable NoneType object"
    assert _accepted(herd_server, result.stdout)["action"] == "NODE_OPERATION"
    _accepted(herd_server, osc("cluster members add", "--nodes", "spare", "web").stdout)
    assert len(osc.json("cluster members list", "web")) == 3
    _accepted(herd_server, osc("cluster members del", "--nodes", "spare", "web").stdout)
    assert osc.json("cluster node show", "spare")["cluster_id"] == ""
    victim = members[0]["id"]
    out = osc("cluster members replace", "--nodes", f"{victim}=spare", "web").stdout
    _accepted(herd_server, out)
    assert spare["id"] in {m["id"] for m in osc.json("cluster members list", "--full-id", "web")}
    # Senlin's REPLACE_NODES: the original leaves the cluster as an orphan, not destroyed.
    left = osc.json("cluster node show", victim)
    assert (left["cluster_id"], left["index"], left["status"]) == ("", -1, "ACTIVE")

    pid = str(foreign_process.pid)
    preview = osc.json(
        "cluster node adopt", "--identity", pid, "--type", "herd.process-1.0", "--preview"
    )
    assert "command" in preview["node_preview"] and sys.executable in preview["node_preview"]
    adopted = osc.json(
        "cluster node adopt",
        "--identity",
        pid,
        "--type",
        "herd.process-1.0",
        "--name",
        "legacy",
        "--role",
        "old",
    )
    assert adopted["status"] == "ACTIVE" and adopted["physical_id"].startswith(f"{pid}:")

    # -- actions and events ----------------------------------------------------------------
    slow_node = osc.json("cluster node create", "--profile", "slow", "slowpoke")
    (creating,) = [
        a
        for a in httpx.get(f"{url}/v1/actions", params={"target": slow_node["id"]}).json()[
            "actions"
        ]
        if a["cause"] == "RPC Request"
    ]
    osc("cluster action update", "--status", "CANCELLED", creating["id"])
    assert _wait(herd_server, creating["id"])["status"] == "CANCELLED"
    actions = osc.json("cluster action list", "--full-id")
    assert {"CLUSTER_OPERATION", "NODE_OPERATION", "CLUSTER_REPLACE_NODES"} <= {
        a["action"] for a in actions
    }
    shown_action = osc.json("cluster action show", creating["id"])
    assert shown_action["status"] == "CANCELLED"
    ended = osc.fails("cluster action update", "--status", "CANCELLED", creating["id"])
    assert "(INIT, WAITING, READY, RUNNING, WAITING_LIFECYCLE_COMPLETION)" in ended, ended
    events = osc.json("cluster event list", "--full-id")
    assert events and osc.json("cluster event show", events[0]["id"])["id"] == events[0]["id"]

    # -- what herd does not support --------------------------------------------------------
    script = tmp_path / "hello.sh"
    script.write_text("echo hello\n")
    for command, text in UNSUPPORTED.items():
        assert text in osc.fails(command, "--script", str(script), "web")

    # -- receivers -------------------------------------------------------------------------
    receiver = osc.json(
        "cluster receiver create",
        "--type", "webhook", "--cluster", "web", "--action", "CLUSTER_SCALE_OUT",
        "--params", "count=1", "r",
    )  # fmt: skip
    # senlinclient prints the channel as its own JSON text
    alarm_url = json.loads(receiver["channel"])["alarm_url"]
    assert alarm_url.startswith(f"{url}/v1/webhooks/{receiver['id']}/trigger?V=2&"), alarm_url
    assert [r["name"] for r in osc.json("cluster receiver list")] == ["r"]
    shown_receiver = osc.json("cluster receiver show", "r")
    assert shown_receiver["action"] == "CLUSTER_SCALE_OUT"
    assert json.loads(shown_receiver["params"]) == {"count": "1"}
    # show prints the same working URL that create printed (as Senlin did)
    assert json.loads(shown_receiver["channel"])["alarm_url"] == alarm_url
    before = len(httpx.get(f"{url}/v1/clusters/web").json()["cluster"]["nodes"])
    triggered = httpx.post(alarm_url)
    assert triggered.status_code == 202, triggered.text
    assert _wait(herd_server, triggered.json()["action"])["status"] == "SUCCEEDED"
    assert len(httpx.get(f"{url}/v1/clusters/web").json()["cluster"]["nodes"]) == before + 1
    osc("cluster receiver update", "--name", "r2", "--params", "count=2", "r")
    assert json.loads(osc.json("cluster receiver show", "r2")["params"]) == {"count": "2"}
    osc("cluster receiver delete", "--force", "r2")
    assert "not found" in osc.fails("cluster receiver show", "r2").lower()
    assert httpx.post(alarm_url).status_code == 404

    # A trigger on a busy cluster is queued, not refused; receivers go with their cluster.
    osc.json("cluster profile create", "--spec-file", osc.spec("busy", BUSY_SPEC), "busyp")
    osc.json("cluster create", "--profile", "busyp", "busy")
    busy_id = osc.json("cluster show", "busy")["id"]
    assert _latest(herd_server, busy_id, "CLUSTER_CREATE")["status"] == "SUCCEEDED"
    queue_url = json.loads(
        osc.json(
            "cluster receiver create",
            "--type", "webhook", "--cluster", "busy", "--action", "CLUSTER_SCALE_OUT", "q",
        )["channel"]
    )["alarm_url"]  # fmt: skip
    expanding = osc("cluster expand", "--count", "1", "busy").stdout
    queued = httpx.post(queue_url, headers={"OpenStack-API-Version": "clustering 1.12"})
    assert queued.status_code == 202, queued.text
    assert queued.headers["OpenStack-API-Version"] == "clustering 1.12"
    _accepted(herd_server, expanding)
    assert _wait(herd_server, queued.json()["action"])["status"] == "SUCCEEDED"
    assert len(osc.json("cluster members list", "busy")) == 2
    assert any(
        e["status"] == "QUEUED"
        for e in httpx.get(f"{url}/v1/events", params={"action": "RECEIVER_TRIGGER"}).json()[
            "events"
        ]
    )
    _accepted(herd_server, osc("cluster delete", "--force", "busy").stdout)
    assert "not found" in osc.fails("cluster receiver show", "q").lower()

    # -- teardown --------------------------------------------------------------------------
    osc("cluster node delete", "--force", "legacy")
    assert foreign_process.wait(timeout=30) is not None
    _accepted(herd_server, osc("cluster policy detach", "--policy", "deletion", "web").stdout)
    out = osc("cluster delete", "--force", "web").stdout
    _accepted(herd_server, out)
    assert "Cluster not found: web" in osc.fails("cluster show", "web")
    osc("cluster node delete", "--force", "slowpoke")
    osc("cluster policy delete", "--force", "deletion")
    osc("cluster profile delete", "--force", "slow")
    print(f"{len(osc.ran)} commands in {time.monotonic() - started:.1f}s")
