"""``toolreplay convert``: rewrite cassettes of another serializer's shape in toolreplay's."""

# Annotations are evaluated at import (no `from __future__ import annotations`): typer reads
# the command's signature, see toolreplay.cli.main.

import os
from pathlib import Path
from typing import Annotated

import typer

from toolreplay.cli.app import app
from toolreplay.cli.common import cannot_write, err, fail, not_stdout, out


@app.command()
def convert(
    paths: Annotated[
        list[Path],
        typer.Argument(
            metavar="PATH",
            help="Cassette files, or folders of them (*.yaml, *.yml).",
            show_default=False,
        ),
    ],
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Write them under this folder, not - \\[default: in place]",
            show_default=False,
            callback=not_stdout("--out", "a folder of cassettes"),
        ),
    ] = None,
) -> None:
    """Convert another serializer's cassettes to toolreplay's shape.

    pydantic-ai's and vcrpy's cassettes; they replay the same replies. Without --out, files
    are converted in place (keep them under version control)."""
    from toolreplay.cassettes.convert import convert_file
    from toolreplay.cassettes.errors import CassetteError

    pairs: list[tuple[Path, Path]] = []
    for path in paths:
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml"))
            if not files:
                raise fail(f"{path}: no *.yaml or *.yml cassette under this folder")
            pairs += [(f, (out_dir / f.relative_to(path)) if out_dir else f) for f in files]
        elif path.exists():
            pairs.append((path, (out_dir / path.name) if out_dir else path))
        else:
            raise fail(
                f"cassette not found: {path} does not exist; give cassette files or folders "
                "of them (a set recorded with trials holds CONFIG/QUESTION/trial-<i>.yaml)"
            )
    # in place, a link would be replaced by a regular file: refused before anything is written
    if links := [s for s, t in pairs if s == t and s.is_symlink()]:
        raise fail(
            f"{links[0]} is a symbolic link (to {os.readlink(links[0])})"
            + (f" and {len(links) - 1} more" if len(links) > 1 else "")
            + ": converting it in place would replace the link by a file. Convert the file it "
            "points to, or write the converted cassettes elsewhere with --out; nothing was "
            "written",
            2,
        )
    # one file that cannot be converted does not stop the others: each is named with why,
    # left as it was, and the exit status says some were not converted
    skipped: list[Path] = []
    for source, target in pairs:
        try:
            n = convert_file(source, target)
        except CassetteError as exc:
            reason = str(exc)
        except OSError as exc:
            reason = cannot_write(target, exc, "--out")
        else:
            out.print(
                f"wrote {target} ({n} interaction{'s' if n != 1 else ''})",
                highlight=False,
                soft_wrap=True,
            )
            continue
        skipped.append(source)
        reason = reason.removeprefix(f"{source}: ")  # the file is named once
        err.print(f"skipped {source}: {reason}", highlight=False, markup=False, soft_wrap=True)
    if skipped:
        raise fail(
            f"{len(skipped)} of {len(pairs)} cassette{'s' if len(pairs) != 1 else ''} not "
            f"converted (named above, each left as it was); {len(pairs) - len(skipped)} written"
        )
