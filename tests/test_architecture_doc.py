"""docs/architecture.md lists every module of the package, and nothing that is not there: its
package tree (the first code block) is checked against ``src/toolreplay``."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "src" / "toolreplay"
DOC = REPO / "docs" / "architecture.md"

def listed_modules(text: str) -> set[str]:
    """The modules the doc's package tree names, as paths relative to the package: a line
    starting in column 0 with ``name/`` opens a package (``study/weather/`` a nested one), and
    the ``*.py`` names on it and on the indented lines below belong to it; a ``*.py`` name in
    column 0 is a top-level module."""
    block = text.split("```", 2)[1]
    found: set[str] = set()
    package = ""
    for line in block.splitlines():
        if not line.strip():
            continue
        head = line.split()[0]
        if not line.startswith(" "):
            if head.endswith("/"):
                package = head
                continue
            package = ""
            if head.endswith(".py"):
                found.add(head)
            continue
        for word in line.split() if package else []:
            if not word.endswith(".py"):
                break  # the description: module names come first on a line
            found.add(package + word)
    return found


def package_modules() -> set[str]:
    return {
        p.relative_to(PACKAGE).as_posix()
        for p in PACKAGE.rglob("*.py")
        if not (p.name == "__init__.py" and p.parent != PACKAGE)
    }


def test_the_architecture_doc_lists_every_module() -> None:
    listed, actual = listed_modules(DOC.read_text(encoding="utf-8")), package_modules()
    missing = sorted(actual - listed)
    assert not missing, f"docs/architecture.md does not list: {missing}"
    stale = sorted(listed - actual)
    assert not stale, f"docs/architecture.md lists modules that do not exist: {stale}"


def test_the_reader_sees_packages_and_their_modules() -> None:
    text = (
        "x\n```\n__init__.py         the API\nwire/               data\n"
        "  episode.py        the episode\n  run.py  merge.py  one module per command\n"
        "                    (continued, not a.py)\nhosts.py            hosts\n```\n"
    )
    assert listed_modules(text) == {"__init__.py", "wire/episode.py", "wire/run.py",
                                    "wire/merge.py", "hosts.py"}  # fmt: skip
