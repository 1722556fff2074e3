"""Rendering: rich tables by default, raw JSON with ``--json``."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TextIO

from rich.console import Console
from rich.markup import escape
from rich.table import Table

Getter = Callable[[Mapping[str, object]], object]


@dataclass(frozen=True)
class Column:
    """A table column: its header, and the field (or a function) it shows."""

    header: str
    key: str | Getter
    is_id: bool = False
    is_time: bool = False

    def value(self, row: Mapping[str, object]) -> object:
        value = self.key(row) if callable(self.key) else row.get(self.key)
        return format_time(value) if self.is_time else value


def id_column(header: str = "id", key: str = "id") -> Column:
    return Column(header, key, is_id=True)


def time_column(header: str, key: str | Getter | None = None) -> Column:
    """A time: the API's ISO text as it is, an epoch number (the database's) made ISO too."""
    return Column(header, key or header, is_time=True)


def format_time(value: object) -> object:
    """Epoch seconds as ``2026-11-27T16:54:01Z`` (UTC, as the API writes times); else as is."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(value, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return value


def _is_time_field(name: str) -> bool:
    return name.endswith(("_at", "_until")) or name in ("deadline", "timestamp")


def _console(stream: TextIO) -> Console:
    width: int | None = None
    if not stream.isatty() and "COLUMNS" not in os.environ:
        width = 200  # pipes and captured output: do not wrap at 80
    return Console(file=stream, width=width, soft_wrap=False, highlight=False)


def stdout() -> Console:
    return _console(sys.stdout)


def stderr() -> Console:
    return _console(sys.stderr)


def format_value(value: object, *, short_id: bool = False) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True, default=str)
    text = str(value)
    if short_id and len(text) == 36 and text.count("-") == 4:
        return text[:8]
    return text


def print_json(data: object) -> None:
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")


def print_table(
    rows: object,
    columns: Sequence[Column],
    *,
    full_id: bool = False,
    title: str | None = None,
) -> None:
    table = Table(title=title, show_lines=False, header_style="bold")
    for column in columns:
        table.add_column(column.header, overflow="fold")
    # the rows of a decoded list body: a list of objects (anything else shows no row)
    for row in rows if isinstance(rows, list | tuple) else []:
        if not isinstance(row, Mapping):
            continue
        table.add_row(
            *(
                escape(format_value(column.value(row), short_id=column.is_id and not full_id))
                for column in columns
            )
        )
    stdout().print(table)


def print_record(record: object, *, title: str | None = None) -> None:
    """One resource (a decoded JSON object) as a two-column Field/Value table, fields sorted."""
    if not isinstance(record, Mapping):
        print_json(record)  # not an object: show it as it came
        return
    table = Table(title=title, header_style="bold")
    table.add_column("Field", style="bold", no_wrap=True)
    table.add_column("Value", overflow="fold")
    for key in sorted(record):
        value = record[key]
        if isinstance(value, dict | list):
            text = json.dumps(value, indent=2, sort_keys=True, default=str)
        else:
            text = format_value(format_time(value) if _is_time_field(key) else value)
        table.add_row(escape(key), escape(text))
    stdout().print(table)


def print_message(message: str) -> None:
    stdout().print(escape(message))


def print_error(message: str) -> None:
    stderr().print(f"[bold red]ERROR:[/] {escape(message)}")
