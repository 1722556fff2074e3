"""``herd iallocator``: a drop-in replacement for Ganeti's ``hail``.

Ganeti runs ``<script> REQUEST_FILE [--k=v ...]`` and reads the JSON answer
from stdout. Exit status follows hail: 1 with ``Error: ...`` on stderr for
input that cannot be parsed, 0 for every parseable request.
"""

from __future__ import annotations

import argparse
import json
import sys

from rich.console import Console
from rich.table import Table

from herd.planner import (
    MalformedRequest,
    PlannerOptions,
    answer_dict,
    check_answer,
    explain,
    load_json,
    parse_request,
)

VERSION = "herd-iallocator 0.1.0 (hail-compatible, protocol version 2)"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="herd-iallocator",
        description="Answer a Ganeti iallocator request (hail-compatible).",
    )
    parser.add_argument(
        "inputs", nargs="*", help="REQUEST.json or -; 'check REQ ANS'; 'explain REQ'"
    )
    parser.add_argument("--version", action="store_true")
    parser.add_argument("-p", "--print-nodes", action="store_true")
    parser.add_argument("-S", "--save", metavar="FILE")
    parser.add_argument("-t", "--text-data", metavar="FILE")
    parser.add_argument("--simulate", action="append", metavar="SPEC")
    parser.add_argument("-v", "--verbose", action="count", default=0)
    parser.add_argument("--ignore-dynu", action="store_true")
    parser.add_argument("--ignore-soft-errors", action="store_true")
    parser.add_argument("--no-capacity-checks", action="store_true")
    parser.add_argument("--restrict-allocation-to", metavar="NODES")
    parser.add_argument("--mond", nargs="?", const="yes")
    parser.add_argument("--mond-xen", action="store_true")
    parser.add_argument("--static-kvm-node-memory", type=int, default=4096)
    parser.add_argument(
        "--max-resyncs-per-node",
        type=int,
        default=2,
        help="herd: DRBD resyncs allowed at once per node (job depends)",
    )
    return parser


def _options(args: argparse.Namespace) -> PlannerOptions:
    restrict = None
    if args.restrict_allocation_to:
        restrict = frozenset(n for n in args.restrict_allocation_to.split(",") if n)
    return PlannerOptions(
        ignore_soft_errors=args.ignore_soft_errors,
        no_capacity_checks=args.no_capacity_checks,
        static_kvm_node_memory=args.static_kvm_node_memory,
        max_resyncs_per_node=max(1, args.max_resyncs_per_node),
        restrict_to_nodes=restrict,
    )


def _read(path: str) -> dict[str, object]:
    try:
        text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()  # noqa: SIM115
    except OSError as exc:
        raise MalformedRequest(f"cannot read {path}: {exc.strerror}") from exc
    return load_json(text)


def run_iallocator(argv: list[str]) -> int:
    """Run the command line; returns the exit status.

    Args:
        argv: arguments after the program name.

    Returns:
        0 on success, 1 for malformed input (or an invalid answer in ``check``),
        2 for a usage error.
    """
    parser = _parser()
    try:
        # Intermixed, so that options may follow a sub-command:
        # ``check --ignore-soft-errors REQ ANS``.
        args, unknown = parser.parse_known_intermixed_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    # Ganeti passes cluster-wide iallocator params as --k=v; ignore unknown ones.
    del unknown
    if args.version:
        print(VERSION)
        return 0
    inputs: list[str] = args.inputs
    options = _options(args)
    try:
        if inputs and inputs[0] == "check" and len(inputs) == 3:
            return _check(inputs[1], inputs[2], options)
        if inputs and inputs[0] == "explain" and len(inputs) == 2:
            return _explain(inputs[1], options)
        if len(inputs) != 1:
            print("Error: This program needs an input file.", file=sys.stderr)
            return 1
        answer = answer_dict(_read(inputs[0]), options)
    except MalformedRequest as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    print(answer.to_json())
    return 0


def _check(request_path: str, answer_path: str, options: PlannerOptions) -> int:
    data = parse_request(_read(request_path), options.static_kvm_node_memory)
    try:
        answer = json.loads(open(answer_path, encoding="utf-8").read())  # noqa: SIM115
    except (OSError, ValueError) as exc:
        raise MalformedRequest(f"cannot read answer {answer_path}: {exc}") from exc
    report = check_answer(
        data, answer, options.max_resyncs_per_node, ignore_soft_errors=options.ignore_soft_errors
    )
    console = Console()
    verdict = "[green]valid[/green]" if report.valid else "[red]INVALID[/red]"
    console.print(f"answer: {verdict}  moved {report.moved}, failed {report.failed}")
    console.print(
        f"cluster score: before {report.score_before:.8f}  after {report.score_after:.8f}"
    )
    for error in report.errors:
        console.print(f"[red]error[/red]: {error}", highlight=False)
    for warning in report.warnings:
        console.print(f"[yellow]warning[/yellow]: {warning}", highlight=False)
    return 0 if report.valid else 1


def _explain(request_path: str, options: PlannerOptions) -> int:
    answer, rows = explain(_read(request_path), options)
    console = Console()
    if not rows:
        console.print(answer.to_json(), highlight=False)
        return 0
    table = Table(title=answer.info)
    for column in (
        "instance",
        "template",
        "from",
        "to",
        "group",
        "opcodes",
        "after jobs",
        "outcome",
    ):
        table.add_column(column)
    for row in rows:
        table.add_row(
            row.instance,
            row.template,
            row.source,
            row.target,
            row.group,
            row.steps,
            row.depends,
            row.outcome,
        )
    console.print(table)
    return 0


def main() -> None:
    """Console-script entry point."""
    sys.exit(run_iallocator(sys.argv[1:]))


if __name__ == "__main__":
    main()
