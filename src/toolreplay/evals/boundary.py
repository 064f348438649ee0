"""What the eval file's pydantic boundary models share: the strict base model, the one-line
error of a declaration, and how a pydantic error becomes that line."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import ConfigDict, ValidationError


class DeclarationError(ValueError):
    """An expectation or a measure declaration is not of its schema (one line: where, what)."""


class EvalFileError(ValueError):
    """An eval file is missing, is not YAML, or does not match the schema."""


#: The configuration of every boundary model: unknown keys refused, frozen. (Each module
#: derives its own ``_Strict(BaseModel)`` with it, so linters see pydantic models.)
STRICT = ConfigDict(extra="forbid", frozen=True)


def first_error(exc: ValidationError, branches: Iterable[str] = ()) -> str:
    """The first error of ``exc`` as ``loc: message``; ``branches`` are the names a union's
    branch shows as in the location (``_UnitModel``; ``str`` always), left out since they are
    not a place in the file."""
    skip = ("str", *branches)
    err = exc.errors()[0]
    loc = ".".join(str(x) for x in err["loc"] if str(x) not in skip)
    msg = str(err["msg"]).removeprefix("Value error, ")
    return f"{loc}: {msg}" if loc else msg
