"""Run many ``openstack`` commands in one interpreter, for the CLI end-to-end test.

The ``openstack`` console script is ``openstackclient.shell:main``; starting it costs
one to two seconds of imports and plugin loading per command, which adds up over the
sixty-odd commands of python-senlinclient. This runner imports it once and calls the
same ``main(argv)`` for every command it reads: one JSON list of arguments per line on
stdin, one JSON line ``{"rc", "stdout", "stderr"}`` per command on stdout.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys


def run(argv: list[str]) -> dict[str, object]:
    from openstackclient.shell import main  # type: ignore[import-untyped]

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse errors exit
            code = exc.code if isinstance(exc.code, int) else 1
    return {"rc": code, "stdout": out.getvalue(), "stderr": err.getvalue()}


def serve() -> None:
    answers = sys.stdout
    for line in sys.stdin:
        if line.strip():
            answers.write(json.dumps(run(json.loads(line))) + "\n")
            answers.flush()


if __name__ == "__main__":
    serve()
