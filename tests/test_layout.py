"""The layout stays readable: no module under ``src/toolreplay`` over 500 lines, and no module
importing another module's private (underscore) names. Read from the source with ``ast``;
nothing is imported."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "toolreplay"

MAX_LINES = 500

#: Modules still over MAX_LINES while the restructure of issue 28 splits them (each is being
#: rewritten on another branch); remove an entry once its module is split.
OVERSIZE_FOR_NOW: set[str] = set()  # evals.py and declarations.py: now the evals/ package


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _relative(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


def test_no_module_is_over_500_lines() -> None:
    sizes = {_relative(p): len(p.read_text(encoding="utf-8").splitlines()) for p in _modules()}
    over = {name: n for name, n in sizes.items() if n > MAX_LINES and name not in OVERSIZE_FOR_NOW}
    assert not over, f"modules over {MAX_LINES} lines (split them): {over}"
    stale = sorted(name for name in OVERSIZE_FOR_NOW if sizes.get(name, 0) <= MAX_LINES)
    assert not stale, f"no longer over {MAX_LINES} lines, remove from OVERSIZE_FOR_NOW: {stale}"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _unit(module: str) -> str:
    """The part of toolreplay a module belongs to: its subpackage (``toolreplay.cli.run`` →
    ``cli``), or the module itself for a top-level module (``toolreplay.evals`` → ``evals``);
    the package's own ``__init__`` is ``""``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _private_imports() -> list[tuple[str, str, str]]:
    """``(importer, module, name)`` for every import in ``src/toolreplay`` of a private name
    of a toolreplay module: ``from toolreplay.X import _name``, or an import of a module path
    with an underscore part (``import toolreplay.X._y``, ``from toolreplay.X._y import z``;
    ``name`` is then ``""`` or the name imported). Relative imports are resolved against the
    importer; imports inside functions and under ``TYPE_CHECKING`` count too; dunder names
    (``__version__``) are not private. A module importing from itself is left out."""
    found = []
    for path in _modules():
        importer = _module_name(path)
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            targets: list[tuple[str, str]] = []  # (module, imported name or "")
            if isinstance(node, ast.ImportFrom):
                if node.level:  # relative: resolved against the importer's package
                    base = importer.split(".")
                    base = base if is_package else base[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    module = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    module = node.module or ""
                targets = [(module, alias.name) for alias in node.names]
            elif isinstance(node, ast.Import):
                targets = [(alias.name, "") for alias in node.names]
            for module, name in targets:
                if module != "toolreplay" and not module.startswith("toolreplay."):
                    continue
                path_parts = module.split(".")[1:]
                if not any(_private(p) for p in path_parts) and not _private(name):
                    continue
                if module == importer:
                    continue
                found.append((importer, module, name))
    return found


def _shown(found: list[tuple[str, str, str]]) -> list[str]:
    """``(importer, module, name)`` triples as ``"importer: module.name"``, sorted."""
    return sorted(f"{imp}: {module}{'.' + name if name else ''}" for imp, module, name in found)


def private_imports_across_packages() -> list[str]:
    """Every private import (see :func:`_private_imports`) where the importing module belongs
    to another part of toolreplay than the module it imports from (see :func:`_unit`), as
    ``"importer: module._name"``."""
    return _shown([f for f in _private_imports() if _unit(f[0]) != _unit(f[1])])


def private_imports_across_modules() -> list[str]:
    """Every private import (see :func:`_private_imports`) from another module, within a
    package too, as ``"importer: module._name"``: a name another module uses is part of its
    module's interface, and is named without the underscore."""
    return _shown(_private_imports())


def test_no_module_imports_another_packages_private_names() -> None:
    found = private_imports_across_packages()
    assert not found, f"{len(found)} private imports across packages:\n" + "\n".join(found)


#: Modules still importing private names from other modules of their own package; each is
#: being rewritten on another branch (issue 28). Remove an entry once its module imports none.
PRIVATE_IMPORTS_FOR_NOW: set[str] = set()  # none left


def test_no_module_imports_another_modules_private_names() -> None:
    """No ``from toolreplay.X import _name`` (nor ``import toolreplay.X._name``) in
    ``src/toolreplay`` outside the module defining ``_name``: a name other modules use is part
    of its module's interface and is public (no underscore, a docstring)."""
    found = private_imports_across_modules()
    new = [line for line in found if line.split(":")[0] not in PRIVATE_IMPORTS_FOR_NOW]
    assert not new, (
        f"{len(new)} imports of another module's private names (drop the underscore where the "
        "name is defined, and give it a docstring):\n" + "\n".join(new)
    )
    importers = {line.split(":")[0] for line in found}
    stale = sorted(PRIVATE_IMPORTS_FOR_NOW - importers)
    assert not stale, f"no private imports any more, remove from PRIVATE_IMPORTS_FOR_NOW: {stale}"


def test_the_private_import_check_sees_every_form(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check reads absolute and relative imports, module paths with a private part,
    imports inside functions and under ``TYPE_CHECKING``, and lets dunder names, public names
    and a module's imports from itself through."""
    package = tmp_path / "toolreplay"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("from toolreplay.sub.a import __version__\n")
    (package / "sub" / "__init__.py").write_text("from ._hidden import thing\n")
    (package / "sub" / "a.py").write_text(
        "from __future__ import annotations\n"
        "from typing import TYPE_CHECKING\n"
        "from toolreplay.sub.a import _mine\n"
        "from toolreplay.sub.b import public\n"
        "if TYPE_CHECKING:\n"
        "    from toolreplay.sub.b import _typed\n"
        "def f():\n"
        "    from .b import _lazy\n"
        "    import toolreplay.sub._hidden\n"
    )
    (package / "sub" / "b.py").write_text("")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", package)
    assert private_imports_across_modules() == [
        "toolreplay.sub.a: toolreplay.sub._hidden",
        "toolreplay.sub.a: toolreplay.sub.b._lazy",
        "toolreplay.sub.a: toolreplay.sub.b._typed",
        "toolreplay.sub: toolreplay.sub._hidden.thing",
    ]


# ---- one checked reader ---------------------------------------------------------------------

#: Functions that still read a file and parse it themselves instead of calling
#: ``toolreplay.inputs.read_checked``; each sits in a module another branch of issue 28 is
#: rewriting. Remove an entry once it calls the one reader.
HAND_WRITTEN_READS_FOR_NOW = {
    ("study/weather/fixture_server.py", "_fixtures"),  # a bundled fixture file, not an input
    ("results/format.py", "load_results"),  # unbounded; results/validate.read_results is not
    ("runs/shards.py", "_manifest_sha256"),  # an unbounded read of manifest.json
}

_READS = {"read_text", "read_bytes"}
_PARSES = {
    ("json", "load"),
    ("json", "loads"),
    *(("yaml", name) for name in ("load", "safe_load", "full_load", "unsafe_load", "parse")),
    *(("yaml", name) for name in ("compose", "compose_all", "load_all", "safe_load_all")),
}


def hand_written_reads() -> set[tuple[str, str]]:
    """``(module, function)`` for every function outside ``inputs.py`` that both reads a file
    (``open``, ``.read_text``, ``.read_bytes``) and parses JSON or YAML itself."""
    found = set()
    for path in _modules():
        name = _relative(path)
        if name == "inputs.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            reads = parses = False
            for node in ast.walk(fn):
                if not isinstance(node, ast.Call):
                    continue
                func = node.func
                if isinstance(func, ast.Name) and func.id == "open":
                    reads = True
                elif isinstance(func, ast.Name) and func.id == "load_json":  # strict_json's
                    parses = True
                elif isinstance(func, ast.Attribute):
                    reads = reads or func.attr in _READS
                    if isinstance(func.value, ast.Name):
                        parses = parses or (func.value.id, func.attr) in _PARSES
            if reads and parses:
                found.add((name, fn.name))
    return found


def test_input_files_are_read_through_the_one_checked_reader() -> None:
    found = hand_written_reads()
    new = sorted(found - HAND_WRITTEN_READS_FOR_NOW)
    assert not new, (
        "these read and parse a file themselves; call toolreplay.inputs.read_checked "
        f"(bounded, depth-checked, one error naming the file): {new}"
    )
    stale = sorted(HAND_WRITTEN_READS_FOR_NOW - found)
    assert not stale, f"no longer hand-written, remove from HAND_WRITTEN_READS_FOR_NOW: {stale}"


def test_no_module_is_named_like_a_standard_library_module() -> None:
    """``toolreplay/secrets.py`` read as the standard library's ``secrets`` to anyone (and
    any tool) not minding the package; no module or package shares such a name."""
    import sys

    names = {
        path.parent.name if path.name == "__init__.py" else path.stem for path in _modules()
    }
    names.discard("toolreplay")
    clashes = sorted(names & set(sys.stdlib_module_names))
    assert not clashes, f"named like standard-library modules: {clashes}"


def _subpackage_interfaces() -> dict[str, set[str]]:
    """Each subpackage's declared interface: the ``__all__`` of its ``__init__`` (read from
    the source: a literal list, or ``sorted(_EXPORTS)`` with the ``_EXPORTS`` dict's keys),
    plus its submodules."""
    out: dict[str, set[str]] = {}
    for init in sorted(PACKAGE.glob("*/__init__.py")):
        tree = ast.parse(init.read_text(encoding="utf-8"))
        declared: set[str] = set()
        for node in tree.body:
            target = node.targets[0] if isinstance(node, ast.Assign) else None
            if target is None and isinstance(node, ast.AnnAssign):
                target = node.target
            value = getattr(node, "value", None)
            if not isinstance(target, ast.Name) or value is None:
                continue
            if target.id == "_EXPORTS" and isinstance(value, ast.Dict):
                declared |= {k.value for k in value.keys if isinstance(k, ast.Constant)}
            if target.id == "__all__":
                declared |= {
                    n.value for n in ast.walk(value)
                    if isinstance(n, ast.Constant) and isinstance(n.value, str)
                }  # fmt: skip
        submodules = {p.stem for p in init.parent.glob("*.py")}
        submodules |= {p.parent.name for p in init.parent.glob("*/__init__.py")}
        out[init.parent.name] = declared | submodules
    return out


def undeclared_imports() -> list[str]:
    """``"importer: package.name"`` for every name a module imports from another subpackage
    (through any of its modules) that the subpackage's ``__init__`` does not declare."""
    interfaces = _subpackage_interfaces()
    found = []
    for path in _modules():
        importer = _module_name(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.ImportFrom) and node.module and node.level == 0):
                continue
            parts = node.module.split(".")
            if parts[0] != "toolreplay" or len(parts) < 2 or parts[1] not in interfaces:
                continue
            if _unit(node.module) == _unit(importer):
                continue
            for alias in node.names:
                if alias.name not in interfaces[parts[1]]:
                    found.append(f"{importer}: {parts[1]}.{alias.name}")
    return sorted(set(found))


def test_each_subpackage_declares_what_other_packages_use() -> None:
    """A name one package uses from another is part of that package's interface: listed in
    its ``__init__`` (``__all__``; loaded from its module on first use)."""
    found = undeclared_imports()
    assert not found, "used across packages but not declared in the package's __init__:\n" + (
        "\n".join(found)
    )
