from __future__ import annotations

from typing import Any

from tests.unit.cli.fakeapi import Answer, FakeApi

CLUSTER = {
    "id": "0b1c2d3e-1111-2222-3333-444455556666",
    "name": "web",
    "status": "ACTIVE",
    "desired_capacity": 2,
    "min_size": 0,
    "max_size": -1,
    "nodes": ["a", "b"],
    "profile_name": "pserver",
    "created_at": "2024-01-01T00:00:00Z",
}


def test_list_sends_microversion_and_token_and_renders_a_table(api: FakeApi, herd: Any) -> None:
    api.on("GET", "/v1/clusters", Answer(200, {"clusters": [CLUSTER]}))
    run = herd("cluster", "list", "--limit", "5", "--sort", "name:asc")
    assert run.exit_code == 0, run.stderr
    request = api.sent("GET")[0]
    assert request.headers["openstack-api-version"] == "clustering 1.14"
    assert request.headers["x-auth-token"] == "secret-token"
    assert request.query == {"limit": ["5"], "sort": ["name:asc"]}
    assert "0b1c2d3e" in run.stdout
    assert "0b1c2d3e-1111" not in run.stdout  # short ids by default
    assert "web" in run.stdout and "ACTIVE" in run.stdout and "pserver" in run.stdout


def test_no_token_header_without_token(api: FakeApi, herd: Any) -> None:
    api.on("GET", "/v1/clusters", Answer(200, {"clusters": []}))
    assert herd("cluster", "list", token=None).exit_code == 0
    assert "x-auth-token" not in api.sent()[0].headers


def test_json_prints_the_raw_body(api: FakeApi, herd: Any) -> None:
    api.on("GET", "/v1/clusters/web", Answer(200, {"cluster": CLUSTER}))
    run = herd("--json", "cluster", "show", "web")
    assert run.exit_code == 0
    assert run.json() == {"cluster": CLUSTER}


def test_show_renders_fields(api: FakeApi, herd: Any) -> None:
    api.on("GET", "/v1/clusters/web", Answer(200, {"cluster": CLUSTER}))
    run = herd("--full-id", "cluster", "show", "web")
    assert run.exit_code == 0
    assert "desired_capacity" in run.stdout
    assert CLUSTER["id"] in run.stdout


def test_senlin_error_body_is_printed_without_traceback(api: FakeApi, herd: Any) -> None:
    api.on(
        "POST",
        "/v1/clusters/web/actions",
        Answer(
            400,
            {
                "code": 400,
                "title": "Bad Request",
                "explanation": "The server could not comply with the request.",
                "error": {
                    "code": 400,
                    "message": "Count for scale-in request cannot be 0.",
                    "type": "BadRequest",
                },
            },
        ),
    )
    run = herd("cluster", "scale-in", "web", "--count", "0")
    assert run.exit_code == 1
    assert "Count for scale-in request cannot be 0." in run.stderr
    assert "HTTP 400 BadRequest" in run.stderr
    assert "Traceback" not in run.stderr + run.stdout


def test_unknown_resource_is_404_message(api: FakeApi, herd: Any) -> None:
    run = herd("node", "show", "nope")
    assert run.exit_code == 1
    assert "could not be found" in run.stderr and "404" in run.stderr


def test_non_json_error_body(api: FakeApi, herd: Any) -> None:
    api.on("GET", "/v1/events", Answer(500, "boom"))
    run = herd("event", "list")
    assert run.exit_code == 1
    assert "boom" in run.stderr and "500" in run.stderr


def test_unreachable_server_is_a_message(herd: Any) -> None:
    from typer.testing import CliRunner

    from herd.cli.main import app

    result = CliRunner().invoke(app, ["--url", "http://127.0.0.1:9", "cluster", "list"])
    assert result.exit_code == 1
    assert "cannot reach http://127.0.0.1:9" in result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_names_are_quoted_in_paths(api: FakeApi, herd: Any) -> None:
    api.on("GET", "/v1/clusters/my%20cluster", Answer(200, {"cluster": CLUSTER}))
    assert herd("cluster", "show", "my cluster").exit_code == 0
    assert api.sent()[0].path == "/v1/clusters/my%20cluster"


def test_global_flags_after_the_subcommand() -> None:
    from herd.cli.main import hoist_global_flags

    assert hoist_global_flags(["cluster", "list", "--json"]) == ["--json", "cluster", "list"]
    assert hoist_global_flags(["node", "show", "x", "--", "--json"]) == [
        "node",
        "show",
        "x",
        "--",
        "--json",
    ]
