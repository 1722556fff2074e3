"""Runnable examples in README.md and docs/*.md: finding them, and checking what they print.

A fenced block runs only when an HTML comment (invisible on GitHub) comes right before it:

* ``<!-- run -->``: a ``sh`` block, run with ``bash -e -o pipefail`` in the page's directory
  (a ``python`` block: run by the venv's interpreter);
* ``<!-- run: fails -->``: the same, but it must exit non-zero (an error a page shows);
* ``<!-- run: file NAME -->``: the block's text is written to ``NAME`` in that directory;
* ``<!-- run: validate profile -->`` / ``<!-- run: validate policy -->``: a YAML spec that the
  server must accept (``POST /v1/profiles/validate`` or ``/v1/policies/validate``);
* ``<!-- run: http -->``: an HTTP request (``METHOD /path``, header lines, a blank line, a body)
  sent to the server;
* ``<!-- output -->``: what the run block before it prints (see ``match_output``).

``needs=CMD[,CMD]`` in a run marker (``<!-- run: needs=promtool -->``) names commands (or
absolute paths: programs, data directories) the block uses that not every machine has; without
them the test skips that block and says so.

Anything else after ``<!-- run`` is an error, so a typo never silently skips an example.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_MARKER = re.compile(r"^<!--\s*(run(?::\s*(?P<args>.*?))?|output)\s*-->\s*$")
_FENCE = re.compile(r"^(?P<fence>```+|~~~+)\s*(?P<info>[^`]*)$")
_BOX = re.compile(r"[│┃┆┊║|━─┏┓┗┛┡┩└┘┌┐├┤┬┴┼╇╈═╭╮╰╯]")
RUN_KINDS = ("sh", "fails", "file", "validate", "http")


class ExampleError(ValueError):
    """A marker the extractor cannot use (the page is wrong, not the software)."""


@dataclass
class Example:
    """One marked block, with the output block that follows it (if any)."""

    page: str
    line: int  # 1-based line of the block's first line of text
    kind: str  # one of RUN_KINDS
    argument: str  # the file name, or what to validate
    text: str
    needs: tuple[str, ...] = ()
    python: bool = False  # a ```python block: run by the venv's interpreter, not bash
    expected: str | None = None
    expected_line: int = 0

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


@dataclass
class _Fence:
    info: str
    line: int
    text: str


def _read_fence(lines: list[str], start: int, page: str) -> tuple[_Fence, int]:
    """The fence opening at ``start`` (the line after a marker) and the index after it."""
    opening = _FENCE.match(lines[start].lstrip()) if start < len(lines) else None
    if opening is None:
        raise ExampleError(f"{page}:{start}: a run/output marker must be followed by a fence")
    fence = opening.group("fence")
    indent = len(lines[start]) - len(lines[start].lstrip())  # a fence inside a list item
    body: list[str] = []
    for index in range(start + 1, len(lines)):
        if lines[index].strip() == fence:
            return _Fence(opening.group("info").strip(), start + 2, "\n".join(body) + "\n"), index
        line = lines[index]
        prefix = line[:indent]
        body.append(line[indent:] if not prefix or prefix.isspace() else line.lstrip())
    raise ExampleError(f"{page}:{start + 1}: the fence is never closed")


def _needs(args: str | None) -> tuple[str | None, tuple[str, ...]]:
    """The marker's arguments without ``needs=...``, and the commands it names."""
    words, needs = [], []
    for word in (args or "").split():
        if word.startswith("needs="):
            needs += [name for name in word.removeprefix("needs=").split(",") if name]
        else:
            words.append(word)
    return " ".join(words), tuple(needs)


def _kind(args: str | None, page: str, line: int) -> tuple[str, str]:
    words = (args or "").split()
    if not words:
        return "sh", ""
    kind, rest = words[0], " ".join(words[1:])
    if kind not in RUN_KINDS or kind == "sh":
        raise ExampleError(f"{page}:{line}: unknown run marker {args!r} (one of {RUN_KINDS})")
    if kind == "file" and not rest:
        raise ExampleError(f"{page}:{line}: 'run: file' needs a file name")
    if kind == "validate" and rest not in ("profile", "policy"):
        raise ExampleError(f"{page}:{line}: 'run: validate' takes profile or policy")
    return kind, rest


def extract(text: str, page: str) -> list[Example]:
    """The marked examples of one page, in order, each with its expected output."""
    lines = text.splitlines()
    examples: list[Example] = []
    index = 0
    while index < len(lines):
        marker = _MARKER.match(lines[index].strip())
        if marker is None:
            stripped = lines[index].strip()
            if stripped.startswith(("<!-- run", "<!--run", "<!-- output", "<!--output")):
                raise ExampleError(f"{page}:{index + 1}: malformed marker {lines[index]!r}")
            index += 1
            continue
        fence, end = _read_fence(lines, index + 1, page)
        if marker.group(1) == "output":
            if not examples or examples[-1].expected is not None:
                raise ExampleError(f"{page}:{index + 1}: an output block needs a run block before")
            if examples[-1].kind == "file":
                raise ExampleError(f"{page}:{index + 1}: a file block has no output")
            examples[-1].expected = fence.text
            examples[-1].expected_line = fence.line
        else:
            args, needs = _needs(marker.group("args"))
            kind, argument = _kind(args, page, index + 1)
            if kind in ("sh", "fails") and fence.info not in ("sh", "bash", "python"):
                raise ExampleError(
                    f"{page}:{fence.line}: a run example needs a ```sh or ```python fence"
                )
            example = Example(page, fence.line, kind, argument, fence.text, needs)
            example.python = fence.info == "python"
            examples.append(example)
        index = end + 1
    return examples


def extract_file(path: Path, root: Path) -> list[Example]:
    return extract(path.read_text(), str(path.relative_to(root)))


def normalise(line: str) -> str:
    """A line without table borders and with single spaces (rich tables pad and draw boxes)."""
    return " ".join(_BOX.sub(" ", line).split())


def _pattern(line: str) -> re.Pattern[str]:
    parts = [re.escape(part) for part in normalise(line).split("...")]
    return re.compile(r"\s*(?:.*?)\s*".join(parts) if len(parts) > 1 else parts[0])


def match_output(expected: str, actual: str) -> str | None:
    """None when every expected line is found, in order, in ``actual``; else what is missing.

    Each non-blank expected line must equal a line of ``actual`` once both are normalised
    (table borders dropped, spaces collapsed); ``...`` in an expected line stands for any text
    (ids, times, ports). Lines of ``actual`` may come between the expected ones.
    """
    actual_lines = [normalise(line) for line in actual.splitlines()]
    position = 0
    for wanted in expected.splitlines():
        if not normalise(wanted):
            continue
        pattern = _pattern(wanted)
        while position < len(actual_lines) and not pattern.fullmatch(actual_lines[position]):
            position += 1
        if position == len(actual_lines):
            return f"expected line not found (in order): {wanted.strip()!r}"
        position += 1
    return None
