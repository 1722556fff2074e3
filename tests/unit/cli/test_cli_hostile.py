"""Every CLI error is one line and a non-zero exit: no traceback, nothing made by accident.

Hostile (or just wrong) input to the server commands and the spec reader (issue 24). No
server starts in these tests: each command fails before it would listen.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from herd.cli import main as cli_main


def _run(*args: str) -> tuple[int, str]:
    # A wide terminal: rich would fold a long line at 80 columns.
    result = CliRunner().invoke(cli_main.app, list(args), env={"COLUMNS": "400"})
    output = result.stdout + result.stderr
    assert "Traceback" not in output, output
    assert result.exception is None or isinstance(result.exception, SystemExit), output
    return result.exit_code, result.stderr.strip()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["serve", "--db-url", "bogus://x"],
            "ERROR: invalid database URL (--db-url, HERD_DB_URL) bogus://x: ",
        ),
        (
            ["engine", "--db-url", "postgresql://herd:pw@127.0.0.1:1/none"],
            "ERROR: cannot open the database postgresql+psycopg://herd:***@127.0.0.1:1/none: ",
        ),
        (["serve", "--port", "99999"], "herd: invalid setting port (HERD_PORT): "),
    ],
)
def test_server_commands_fail_in_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    code, error = _run(*args, "--data-dir", str(tmp_path / "data"))
    assert code != 0
    assert error.startswith(message) and "\n" not in error, error
    assert "pw" not in error  # the password is never printed


def test_a_data_dir_that_is_a_file(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("")
    code, error = _run("serve", "--data-dir", str(afile), "--port", "0")
    assert code == 1
    assert (
        error == f"ERROR: {afile} is not a directory (--data-dir, --db-url) (DatabaseUnavailable)"
    )


def test_no_directories_are_made_for_a_sqlite_url(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/no/such/dir/x.db"
    code, error = _run("token", "list", "--db-url", url)
    assert code == 1 and "does not exist" in error and "\n" not in error, error
    assert not (tmp_path / "no").exists()


def test_a_spec_file_that_is_not_utf8(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_bytes(b"\xff\xfe type: herd.sim")
    code, error = _run("--url", "http://127.0.0.1:1", "profile", "create", "-s", str(spec), "p")
    assert code == 1
    assert error == f"ERROR: spec file {spec} is not UTF-8 text (byte 0: invalid start byte)"
