"""herd against hail on Ganeti's own test data (ganeti.md sections 5 and 6).

The data comes from Debian's ganeti-testsuite package; the real hail binary
(ganeti-htools-3.0) is run for comparison when installed.
"""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from herd.cli.iallocator import run_iallocator
from herd.planner import PlannerOptions, answer_dict, check_answer, parse_request

DATA = Path("/usr/share/ganeti/testsuite/test/data/htools")
HAIL = Path("/usr/lib/ganeti/iallocators/hail")

pytestmark = pytest.mark.skipif(
    not DATA.is_dir(), reason=f"Ganeti test data not installed ({DATA}; apt ganeti-testsuite)"
)

HAIL_FILES = sorted(p.name for p in DATA.glob("hail-*.json")) if DATA.is_dir() else []


def _load(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((DATA / name).read_text())
    return loaded


def _hail(raw: dict[str, Any], tmp_path: Path, *flags: str) -> dict[str, Any] | None:
    if not HAIL.exists():
        return None
    request = tmp_path / "request.json"
    request.write_text(json.dumps(raw))
    done = subprocess.run(
        [str(HAIL), *flags, str(request)], capture_output=True, text=True, timeout=60, check=False
    )
    if done.returncode != 0:
        return None
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def _herd(raw: dict[str, Any], **options: Any) -> dict[str, Any]:
    answer = answer_dict(raw, PlannerOptions(**options))
    return {"success": answer.success, "info": answer.info, "result": answer.result}


def _compare(raw: dict[str, Any], tmp_path: Path, *flags: str, **options: Any) -> dict[str, Any]:
    """herd's answer is valid, moves at least as much as hail and scores no worse."""
    data = parse_request(raw)
    herd = _herd(raw, **options)
    hail = _hail(raw, tmp_path, *flags)
    if raw["request"]["type"] in ("change-group", "node-evacuate"):
        mine = check_answer(data, herd, max_resyncs_per_node=2)
        assert mine.valid, mine.errors
        if hail is not None:
            theirs = check_answer(data, hail)
            assert mine.moved >= theirs.moved
            if mine.moved == theirs.moved:
                assert mine.score_after <= theirs.score_after + 1e-6
            for name, reason in hail["result"][1]:
                herd_reason = dict(map(tuple, herd["result"][1])).get(name)
                if herd_reason is not None:
                    assert _kind(herd_reason) == _kind(reason), (herd_reason, reason)
    elif hail is not None:
        if hail["success"]:
            assert herd["success"], herd["info"]
            assert check_answer(data, herd).valid
        elif not herd["success"]:
            herd_kinds, hail_kinds = _kind(herd["info"]), _kind(hail["info"])
            assert herd_kinds & hail_kinds or not (herd_kinds or hail_kinds), (herd, hail)
    return herd


def _kind(text: str) -> set[str]:
    kinds = {word.rstrip(":;,") for word in text.split() if word.startswith("Fail")}
    if "cannot be relocated" in text:
        kinds.add("cannot-relocate")
    return kinds


@pytest.mark.parametrize("name", HAIL_FILES)
def test_every_hail_file(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    raw = _load(name)
    if name == "hail-invalid-reloc.json":
        assert run_iallocator([str(DATA / name)]) == 1
        assert "key 'name': Unable to read String" in capsys.readouterr().err
        return
    _compare(raw, tmp_path, "--no-capacity-checks")


def _variant(
    name: str, evac_mode: str | None = None, excl: bool = False, spindles: bool = True
) -> dict[str, Any]:
    raw = copy.deepcopy(_load(name))
    if evac_mode:
        raw["request"]["evac_mode"] = evac_mode
    for node in raw["nodes"].values():
        if excl:
            node["ndparams"]["exclusive_storage"] = True
    if not spindles or evac_mode:
        for inst in raw["instances"].values():
            for disk in inst["disks"]:
                disk.pop("spindles", None)
    return raw


@pytest.mark.parametrize(
    ("mode", "nodes", "kinds"),
    [
        ("primary-only", ["node4", "node3"], ["OP_INSTANCE_MIGRATE"]),
        ("secondary-only", ["node3", None], ["OP_INSTANCE_REPLACE_DISKS"]),
        (
            "all",
            [None, None],
            ["OP_INSTANCE_REPLACE_DISKS", "OP_INSTANCE_MIGRATE", "OP_INSTANCE_REPLACE_DISKS"],
        ),
    ],
)
def test_node_evac_modes(
    mode: str, nodes: list[str | None], kinds: list[str], tmp_path: Path
) -> None:
    herd = _compare(_variant("hail-node-evac.json", evac_mode=mode), tmp_path)
    assert herd["info"].endswith("0 instances failed to move and 1 were moved successfully")
    (moved,) = herd["result"][0]
    assert all(want is None or got == want for got, want in zip(moved[2], nodes, strict=False))
    assert [op["OP_ID"] for op in herd["result"][2][0]] == kinds


@pytest.mark.parametrize("name", ["hail-node-evac.json", "hail-change-group.json"])
def test_exclusive_storage(name: str, tmp_path: Path) -> None:
    herd = _compare(_variant(name, excl=True), tmp_path)
    assert herd["info"].endswith("0 instances failed to move and 1 were moved successfully")


@pytest.mark.parametrize("name", ["hail-node-evac.json", "hail-change-group.json"])
def test_exclusive_storage_without_spindles_fails(name: str, tmp_path: Path) -> None:
    herd = _compare(_variant(name, excl=True, spindles=False), tmp_path)
    assert herd["info"].endswith("1 instances failed to move and 0 were moved successfully")
    assert "FailSpindles" in herd["result"][1][0][1]


def test_reloc_crowded_and_soft_errors(tmp_path: Path) -> None:
    raw = _load("hail-reloc-drbd-crowded.json")
    herd = _compare(raw, tmp_path)
    assert not herd["success"] and "FailMem" in herd["info"]
    assert _herd(raw, ignore_soft_errors=True)["result"] == ["node1"]


def test_shelltest_expectations() -> None:
    assert _herd(_load("hail-alloc-drbd.json"))["result"] == ["node2", "node1"]
    assert _herd(_load("hail-reloc-drbd.json"))["result"] == ["node1"]
    assert _herd(_load("hail-alloc-secondary.json"))["result"] == "node-2-2"
    assert _herd(_load("hail-alloc-nlocation.json"))["result"] == ["node3", "node2"]
    assert _herd(_load("hail-alloc-desired-location.json"))["result"] == ["node1"]
    assert "Selected group: Group 1" in _herd(_load("hail-alloc-restricted-network.json"))["info"]
    assert "FailTags: 3" in _herd(_load("hail-alloc-plain-tags.json"))["info"]
    assert _herd(_load("hail-alloc-plain-tags.json"), ignore_soft_errors=True)["success"]
    assert not _herd(_load("hail-alloc-invalid-network.json"))["success"]
    assert "FailDisk" in _herd(_load("hail-alloc-invalid-twodisks.json"))["info"]


@pytest.mark.parametrize(
    ("stdin", "message"),
    [
        ("", "Invalid JSON"),
        ("[]", "Unable to read JSObject"),
        ("{}", "key 'request' not found"),
        ('{"request": 0}', "key 'request'"),
    ],
)
def test_cli_errors(
    stdin: str, message: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    assert run_iallocator(["-"]) == 1
    assert message in capsys.readouterr().err


def test_cli_accepts_hail_options(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(DATA / "hail-change-group.json")
    argv = [
        "-p",
        "-S",
        "x",
        "-t",
        "y",
        "--simulate",
        "p,1,1,1,1",
        "-v",
        "--ignore-dynu",
        "--no-capacity-checks",
        "--mond=no",
        "--mond-xen",
        "--static-kvm-node-memory=0",
        "--restrict-allocation-to",
        "node1",
        "--some-cluster-param=3",
        path,
    ]
    assert run_iallocator(argv) == 0
    out = capsys.readouterr().out
    assert json.loads(out)["success"] is True and "\n" not in out.strip()
    assert run_iallocator([]) == 1
