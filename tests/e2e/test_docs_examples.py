"""Every example marked runnable in README.md and docs/*.md runs as written (issue 29).

One real ``herd serve`` (free port, temporary data directory) whose ``PATH`` lacks the venv, as
under ``make serve`` started from a shell without the venv activated, serves every page; a
page's examples run in order, in a working directory of its own, with the venv on the
``PATH`` of the shell (the README says to activate it) and ``HERD_URL`` naming the test's
server. The marker syntax is in ``tests/e2e/docs_examples.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml
from tests.conftest import free_port
from tests.e2e.conftest import _kill_node_processes
from tests.e2e.docs_examples import (
    Example,
    ExampleError,
    extract,
    extract_file,
    match_output,
)
from tests.e2e.server import HerdServer

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = str(Path(sys.executable).parent)
VERSION = {"OpenStack-API-Version": "clustering 1.14"}
# README first, then the first-hour page (which follows it), then the reference pages.
PAGES = [
    ROOT / "README.md",
    ROOT / "docs" / "first-hour.md",
    *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "first-hour.md"),
]
RUNNABLE = [page for page in PAGES if page.exists() and extract_file(page, ROOT)]


def _path_without_venv() -> str:
    return os.pathsep.join(
        part for part in os.environ.get("PATH", "").split(os.pathsep) if part != VENV_BIN
    )


@pytest.fixture(scope="module")
def page_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HerdServer]:
    """One server for every page, in order, as a reader would go through them (pages clean up
    what later pages would collide with). Started once: a start costs seconds on a busy box."""
    data = tmp_path_factory.mktemp("docs") / "herd-data"
    server = HerdServer(data, free_port(), PATH=_path_without_venv())
    try:
        yield server.start(timeout=60)
    finally:
        server.stop()
        _kill_node_processes(data)


def _present(need: str) -> bool:
    """A command on PATH, or a path (a data directory, an absolute program) that exists."""
    return Path(need).exists() if "/" in need else shutil.which(need) is not None


def _on_port(text: str, server: HerdServer) -> str:
    """The page's default address (``make serve``: 127.0.0.1:8778) becomes the test's server."""
    return text.replace("127.0.0.1:8778", f"127.0.0.1:{server.port}")


def _run_shell(example: Example, server: HerdServer, workdir: Path) -> str:
    env = {
        **os.environ,
        "PATH": os.pathsep.join([VENV_BIN, _path_without_venv()]),
        "HERD_URL": server.url,
        "COLUMNS": "200",
    }
    env.pop("HERD_DATA_DIR", None)
    program = [sys.executable] if example.python else ["bash", "-e", "-o", "pipefail"]
    result = subprocess.run(
        [*program, "-c", _on_port(example.text, server)],
        cwd=workdir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=240,
    )
    failed = result.returncode != 0
    assert failed == (example.kind == "fails"), (
        f"{example.where} exited {result.returncode} ({example.kind}):\n{result.stdout}"
    )
    return result.stdout


def _render(response: httpx.Response) -> str:
    head = [f"HTTP/1.1 {response.status_code} {response.reason_phrase}"]
    head += [f"{name}: {value}" for name, value in response.headers.items()]
    try:
        body = json.dumps(response.json(), indent=2)
    except ValueError:
        body = response.text
    return "\n".join([*head, "", body])


def _run_http(example: Example, server: HerdServer) -> str:
    head, _, body = example.text.partition("\n\n")
    request_line, *header_lines = head.strip().splitlines()
    method, target, *_ = request_line.split()
    headers = dict(line.split(":", 1) for line in header_lines)
    response = httpx.request(
        method,
        server.url + target,
        headers={name.strip(): value.strip() for name, value in headers.items()},
        content=body.strip().encode() or None,
        timeout=60,
    )
    return _render(response)


def _run_validate(example: Example, server: HerdServer) -> str:
    kind = example.argument
    spec = yaml.safe_load(example.text)
    collection = {"profile": "profiles", "policy": "policies"}[kind]
    response = httpx.post(
        f"{server.url}/v1/{collection}/validate",
        json={kind: {"spec": spec}},
        headers=VERSION,
        timeout=60,
    )
    assert response.status_code == 200, f"{example.where}: {response.status_code} {response.text}"
    return _render(response)


def _run(example: Example, server: HerdServer, workdir: Path) -> str:
    if example.kind == "file":
        (workdir / example.argument).write_text(_on_port(example.text, server))
        return ""
    if example.kind == "validate":
        return _run_validate(example, server)
    if example.kind == "http":
        return _run_http(example, server)
    return _run_shell(example, server, workdir)


pytestmark = pytest.mark.e2e


@pytest.mark.slow
@pytest.mark.parametrize("page", RUNNABLE, ids=[str(p.relative_to(ROOT)) for p in RUNNABLE])
def test_page_examples_run_as_written(page: Path, page_server: HerdServer, tmp_path: Path) -> None:
    workdir = tmp_path / "work"
    workdir.mkdir()
    skipped: list[str] = []
    for example in extract_file(page, ROOT):
        missing_commands = [name for name in example.needs if not _present(name)]
        if missing_commands:
            skipped.append(f"{example.where} (needs {', '.join(missing_commands)})")
            continue
        output = _run(example, page_server, workdir)
        if example.expected is not None:
            missing = match_output(_on_port(example.expected, page_server), output)
            assert missing is None, (
                f"{page.name}:{example.expected_line}: {missing}\n--- output of {example.where}:\n"
                f"{output}"
            )
    if skipped:
        pytest.skip(f"the rest ran; not installed here: {'; '.join(skipped)}")


def test_readme_first_cluster_and_first_hour_are_marked() -> None:
    # The examples a newcomer runs first must stay under test.
    readme = extract_file(ROOT / "README.md", ROOT)
    assert any("herd cluster create web" in example.text for example in readme)
    first_hour = extract_file(ROOT / "docs" / "first-hour.md", ROOT)
    assert len(first_hour) >= 8


def test_every_page_parses() -> None:
    # A malformed marker fails here, on whichever page it is.
    for page in PAGES:
        if page.exists():
            extract_file(page, ROOT)


def test_extractor_markers_and_output_matching() -> None:
    page = "\n".join(
        [
            "text",
            "<!-- run: file spec.yaml -->",
            "```yaml",
            "a: 1",
            "```",
            "<!-- run -->",
            "```sh",
            "herd cluster list",
            "```",
            "<!-- output -->",
            "```text",
            "│ ... │ web │ ACTIVE │",
            "```",
            "```sh",
            "not marked",
            "```",
        ]
    )
    examples = extract(page, "p.md")
    assert [(e.kind, e.argument) for e in examples] == [("file", "spec.yaml"), ("sh", "")]
    assert extract("<!-- run: fails needs=jq,curl -->\n```sh\nx\n```\n", "p")[0].needs == (
        "jq",
        "curl",
    )
    assert examples[1].text == "herd cluster list\n" and examples[1].line == 8
    assert examples[1].expected == "│ ... │ web │ ACTIVE │\n"
    # Indentation inside a block is kept; a fence inside a list item loses the item's indent.
    nested = extract("<!-- run: file a.yaml -->\n```yaml\na:\n  b: 1\n```\n", "p")[0].text
    assert nested == "a:\n  b: 1\n"
    item = "* x\n  <!-- run: file a.yaml -->\n  ```yaml\n  a:\n    b: 1\n  ```\n"
    assert extract(item, "p")[0].text == "a:\n  b: 1\n"
    table = "┃ id ┃ name ┃ status ┃\n│ 1a2b3c4d │ web  │ ACTIVE │\n"
    assert match_output(examples[1].expected, table) is None
    assert match_output("│ ... │ web │ ERROR │", table) is not None
    assert match_output("b\na", "a\nb") is not None  # order matters


@pytest.mark.parametrize(
    "page",
    [
        "<!-- run: typo -->\n```sh\nx\n```\n",
        "<!-- run -->\ntext\n",
        "<!-- run -->\n```javascript\nx\n```\n",
        "<!-- output -->\n```text\nx\n```\n",
        "<!-- run: validate thing -->\n```yaml\nx\n```\n",
        "<!-- run -->\n```sh\nnever closed\n",
    ],
)
def test_extractor_refuses_a_marker_it_cannot_use(page: str) -> None:
    with pytest.raises(ExampleError):
        extract(page, "p.md")
