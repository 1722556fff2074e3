"""The dashboard's HTML shell preloads every ES module it imports (issue 26: first rows).

Without a ``modulepreload`` link a module is asked for only once the module importing it has
arrived, one level at a time; a view added without its link would make the page slower again.
"""

from __future__ import annotations

import re

from herd.api.ui import STATIC


def test_every_module_the_shell_loads_is_preloaded() -> None:
    shell = (STATIC / "index.html").read_text()
    preloaded = set(re.findall(r'<link rel="modulepreload" href="/ui/static/([^"]+)">', shell))
    modules = {
        str(path.relative_to(STATIC))
        for path in STATIC.rglob("*.js")
        if "vendor" not in path.parts and path.name != "app.js"
    }
    assert preloaded == modules
    assert '<script type="module" src="/ui/static/app.js">' in shell
