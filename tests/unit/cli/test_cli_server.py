from __future__ import annotations

import json
import re
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from herd.cli import main as cli_main
from herd.config import Settings


def _fake_module(monkeypatch: pytest.MonkeyPatch, name: str, **functions: Any) -> None:
    module = types.ModuleType(name)
    for key, value in functions.items():
        setattr(module, key, value)
    monkeypatch.setitem(sys.modules, name, module)


def test_serve_builds_settings_from_options(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen: list[Settings] = []
    _fake_module(monkeypatch, "herd.api.server", serve=seen.append)
    monkeypatch.setenv("HERD_ENGINE_WORKERS", "3")
    result = CliRunner().invoke(
        cli_main.app,
        ["serve", "--port", "9999", "--data-dir", str(tmp_path), "--auth", "token", "--no-engine"],
    )
    assert result.exit_code == 0, result.output
    (settings,) = seen
    assert settings.port == 9999 and settings.host == "127.0.0.1"
    assert settings.data_dir == tmp_path and settings.auth == "token"
    assert settings.run_engine is False
    assert settings.engine_workers == 3  # HERD_* still apply


def test_serve_rejects_unknown_auth() -> None:
    result = CliRunner().invoke(cli_main.app, ["serve", "--auth", "basic"])
    assert result.exit_code == 2


def test_engine_and_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    engines: list[Settings] = []
    agents: list[tuple[Any, ...]] = []
    _fake_module(monkeypatch, "herd.engine.service", run_forever=lambda s, **kw: engines.append(s))
    _fake_module(monkeypatch, "herd.agent.reconciler", run_forever=lambda *a: agents.append(a))
    runner = CliRunner()
    assert runner.invoke(cli_main.app, ["engine", "--db-url", "sqlite:///x.db"]).exit_code == 0
    assert engines[0].db_url == "sqlite:///x.db"
    result = runner.invoke(
        cli_main.app, ["--url", "http://central:1", "--token", "t0", "agent", "--region", "r1"]
    )
    assert result.exit_code == 0, result.output
    _, region, url, token = agents[0]
    assert (region, url, token) == ("r1", "http://central:1", "t0")


def test_iallocator_gets_raw_argv(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []

    def run_iallocator(argv: list[str]) -> int:
        calls.append(argv)
        return 7

    _fake_module(monkeypatch, "herd.cli.iallocator", run_iallocator=run_iallocator)
    monkeypatch.setattr(sys, "argv", ["herd", "iallocator", "--help", "-m", "req.json"])
    with pytest.raises(SystemExit) as exit_info:
        cli_main.main()
    assert exit_info.value.code == 7
    assert calls == [["--help", "-m", "req.json"]]
    # reached through typer too (e.g. after a global option)
    result = CliRunner().invoke(cli_main.app, ["--json", "iallocator", "-v", "x"])
    assert result.exit_code == 7
    assert calls[-1] == ["-v", "x"]


def test_a_reader_that_leaves_early_gets_no_traceback(tmp_path: Path) -> None:
    """``herd iallocator req.json | head -c 10``: the pipe closes before herd writes; herd
    exits 1 quietly, as a shell tool does, not with a BrokenPipeError traceback."""
    import subprocess

    from tests.unit.planner.factory import template_cluster

    request = tmp_path / "req.json"
    raw = template_cluster({"type": "node-evacuate", "instances": ["i-drbd"], "evac_mode": "all"})
    request.write_text(json.dumps(raw))
    herd = Path(sys.executable).with_name("herd")
    process = subprocess.Popen(
        [str(herd), "iallocator", str(request)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # long before herd has parsed the request and answers
    errors = process.stderr.read().decode()
    assert process.wait(timeout=60) == 1
    assert "Traceback" not in errors and "BrokenPipe" not in errors, errors


def _make_database(data_dir: Path) -> None:
    from herd.store.database import Database

    database = Database(f"sqlite:///{data_dir / 'herd.db'}")
    database.migrate()
    database.dispose()


def test_token_refuses_a_missing_or_empty_data_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    result = runner.invoke(cli_main.app, ["token", "list"])
    assert result.exit_code == 1
    assert f"no herd database at {tmp_path.resolve() / 'herd-data' / 'herd.db'}" in result.stderr
    monkeypatch.setenv("HERD_DATA_DIR", "")
    result = runner.invoke(cli_main.app, ["token", "list"])
    assert result.exit_code == 2
    assert "invalid setting data_dir (HERD_DATA_DIR): Value error, must not be empty" in (
        result.stderr
    )
    assert list(tmp_path.iterdir()) == []  # nothing was created


def test_token_commands(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    store: dict[str, dict[str, Any]] = {}

    def create_token(
        session: Any, project: str, role: str, name: str, now: float, **kw: Any
    ) -> Any:
        row = types.SimpleNamespace(
            id="tok-1",
            name=name,
            project=project,
            role=role,
            regions=kw.get("regions"),
            created_at=now,
            expires_at=None,
        )
        store[row.id] = vars(row)
        assert session is not None
        return row, "s3cr3t"

    def list_tokens(session: Any) -> list[Any]:
        return [types.SimpleNamespace(**row) for row in store.values()]

    def revoke(session: Any, token_id: str) -> bool:
        return store.pop(token_id, None) is not None

    _fake_module(
        monkeypatch,
        "herd.store.tokens",
        create_token=create_token,
        list_tokens=list_tokens,
        revoke=revoke,
    )
    runner = CliRunner()
    data = ["--data-dir", str(tmp_path)]
    agent = ["token", "create", "--project", "p1", "--role", "agent", "--name", "a"]
    create = [*agent, "--region", "RegionA", "--region", "RegionB"]
    # No database there: a token nobody's server reads would be a silent failure.
    result = runner.invoke(cli_main.app, [*create, *data])
    assert result.exit_code == 1
    assert f"no herd database at {tmp_path.resolve() / 'herd.db'}" in result.stderr
    assert not (tmp_path / "herd.db").exists() and store == {}
    _make_database(tmp_path)
    result = runner.invoke(cli_main.app, ["--json", *create, *data])
    assert result.exit_code == 0, result.output
    assert '"secret": "s3cr3t"' in result.stdout and '"role": "agent"' in result.stdout
    assert store["tok-1"]["regions"] == ["RegionA", "RegionB"]
    result = runner.invoke(cli_main.app, ["token", "list", *data])
    assert "tok-1" in result.stdout and "s3cr3t" not in result.stdout
    assert "RegionA,RegionB" in result.stdout
    assert re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", result.stdout)  # not an epoch float
    assert runner.invoke(cli_main.app, ["token", "revoke", "tok-1", *data]).exit_code == 0
    result = runner.invoke(cli_main.app, ["token", "revoke", "tok-1", *data])
    assert result.exit_code == 1 and "no token" in result.stderr
    result = runner.invoke(cli_main.app, ["token", "create", "--project", "p", "--role", "root"])
    assert result.exit_code == 2


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ([], "an agent token needs --region R"),
        (["--region", "A", "--all-regions"], "give --region or --all-regions, not both"),
        (["--role", "member", "--region", "A"], "--region and --all-regions are for agent"),
        (["--role", "admin", "--all-regions"], "--region and --all-regions are for agent"),
    ],
)
def test_token_create_says_which_regions(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, extra: list[str], message: str
) -> None:
    """Least privilege by default: an agent token names its regions or says it reads all."""
    _fake_module(monkeypatch, "herd.store.tokens", create_token=None)
    _make_database(tmp_path)
    command = ["token", "create", "--project", "p", "--role", "agent", "--data-dir", str(tmp_path)]
    result = CliRunner().invoke(cli_main.app, [*command, *extra])
    assert result.exit_code == 1, result.output
    assert message in result.stderr


def test_an_all_regions_agent_token_lists_as_all(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _make_database(tmp_path)
    data = ["--data-dir", str(tmp_path)]
    runner = CliRunner()
    create = ["token", "create", "--project", "p", "--role", "agent", "--all-regions", *data]
    assert runner.invoke(cli_main.app, create).exit_code == 0
    create = ["token", "create", "--project", "p", "--role", "agent", "--region", "R1", *data]
    assert runner.invoke(cli_main.app, create).exit_code == 0
    result = runner.invoke(cli_main.app, ["--json", "token", "list", *data])
    regions = sorted(str(t["regions"]) for t in json.loads(result.stdout)["tokens"])
    assert regions == ["None", "['R1']"]
    table = runner.invoke(cli_main.app, ["token", "list", *data]).stdout
    assert "(all)" in table and "R1" in table


@pytest.mark.parametrize(
    ("command", "env", "value", "message"),
    [
        (["serve"], "HERD_WEBHOOK_KEY", "", "invalid setting webhook_key (HERD_WEBHOOK_KEY)"),
        (["serve"], "HERD_SQLITE_SYNCHRONOUS", "OFF", "invalid setting sqlite_synchronous"),
        (["engine"], "HERD_PORT", "abc", "invalid setting port (HERD_PORT)"),
    ],
)
def test_a_bad_setting_is_one_line_naming_it(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    command: list[str],
    env: str,
    value: str,
    message: str,
) -> None:
    started: list[Settings] = []
    _fake_module(monkeypatch, "herd.api.server", serve=started.append)
    monkeypatch.setenv(env, value)
    result = CliRunner().invoke(cli_main.app, [*command, "--data-dir", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output and started == []


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (
            ["--host", "0.0.0.0"],
            {},
            "herd: invalid settings: Refusing to serve with auth 'none' on 0.0.0.0: without "
            "tokens every caller is an administrator.",
        ),
        (
            ["--auth", "keystone"],
            {"HERD_KEYSTONE_AUTH_URL": "http://127.0.0.1:5000/v3"},
            "herd: invalid settings: auth 'keystone' needs HERD_KEYSTONE_PASSWORD",
        ),
        (
            ["--auth", "token"],
            {"HERD_POLICY_FILE": "/etc/herd/policy.yaml"},
            "herd: invalid settings: policy_file (HERD_POLICY_FILE) applies to auth 'keystone'",
        ),
        (
            [],
            {"HERD_ENGINE_DEAD_AFTER": "2", "HERD_ENGINE_HEARTBEAT_INTERVAL": "2"},
            "herd: invalid settings: engine_dead_after (2.0 s) must be longer than "
            "engine_heartbeat_interval (2.0 s)",
        ),
        (
            [],
            {"HERD_HEALTH_BACKOFF_BASE": "60", "HERD_HEALTH_BACKOFF_MAX": "30"},
            "herd: invalid settings: health_backoff_max (30.0 s) must not be shorter than "
            "health_backoff_base (60.0 s).",
        ),
        ([], {"HERD_ENGINE_WORKERS": "0"}, "herd: invalid setting engine_workers"),
    ],
    ids=["auth-none-public", "keystone-half", "policy-file", "dead-after", "backoff", "workers"],
)
def test_a_bad_combination_is_refused_before_serving(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    args: list[str],
    env: dict[str, str],
    message: str,
) -> None:
    """Settings refuse it themselves: one line on stderr, exit 2, nothing served."""
    started: list[Settings] = []
    _fake_module(monkeypatch, "herd.api.server", serve=started.append)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = CliRunner().invoke(cli_main.app, ["serve", "--data-dir", str(tmp_path), *args])
    assert result.exit_code == 2, result.output
    assert " ".join(message.split()) in " ".join(result.output.split())
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert "Traceback" not in result.output and started == []
