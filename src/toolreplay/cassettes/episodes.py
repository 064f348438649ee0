"""Episodes from a cassette file: the file loaded (toolreplay's, vcrpy's or pydantic-ai's YAML)
and its interactions read by the wire readers
(:mod:`toolreplay.wire.reader`, which says what is read and how, for every protocol).

The wire reader's names (:func:`~toolreplay.wire.reader.read_wire_episodes`,
:func:`~toolreplay.wire.reader.episodes_from_interactions`,
:class:`~toolreplay.wire.interactions.WireRecord`...) are importable from here too, as they
were before the reader moved under :mod:`toolreplay.wire`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolreplay.wire.episode import Episode
from toolreplay.wire.episode import Message as Message
from toolreplay.wire.interactions import Exchange as Exchange
from toolreplay.wire.interactions import WireEpisodeError as WireEpisodeError
from toolreplay.wire.interactions import WireRecord as WireRecord
from toolreplay.wire.interactions import WireRound as WireRound
from toolreplay.wire.interactions import read_exchanges as read_exchanges
from toolreplay.wire.reader import (
    episode_from_interactions as episode_from_interactions,
)
from toolreplay.wire.reader import (
    episodes_from_interactions as episodes_from_interactions,
)
from toolreplay.wire.reader import read_wire_episodes as read_wire_episodes


def load_recorded(path: Path) -> list[dict[str, Any]]:
    """The interactions of the cassette at ``path`` for reading episodes from the wire, not
    for replay: a toolreplay cassette loaded and checked by
    :func:`toolreplay.cassettes.store.load_cassette`; one that fails that check but is YAML
    with an ``interactions`` list (vcrpy's own serializer, pydantic-ai's JSON-body shape with
    ``response.parsed_body``) as it is, for the wire readers' envelope rules
    (:func:`toolreplay.wire.interactions.read_exchanges`). Raises the
    :class:`~toolreplay.cassettes.errors.CassetteError` of the check otherwise (a file that is
    missing, too large, not YAML, or no cassette)."""
    from toolreplay.cassettes.store import CASSETTE_LIMIT, load_cassette  # pydantic: when used
    from toolreplay.inputs import read_checked

    try:
        return load_cassette(path)
    except Exception as ours:  # a foreign serializer's shape: read it as plain YAML
        try:
            data = read_checked(path, what="cassette", limit=CASSETTE_LIMIT, parse="yaml")
        except Exception:
            raise ours from None
        if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
            raise ours from None
        return list(data["interactions"])


def episodes_from_cassette(
    path: str | Path, configuration: str = "", question_id: str = ""
) -> list[Episode]:
    """Every episode of the cassette at ``path`` (toolreplay's, vcrpy's or pydantic-ai's
    YAML), read from the wire (:func:`~toolreplay.wire.reader.
    episodes_from_interactions`). A toolreplay cassette is loaded and checked by
    :func:`toolreplay.cassettes.store.load_cassette`; one that fails that check but is YAML
    with an ``interactions`` list is read as a foreign cassette. Raises
    :class:`~toolreplay.cassettes.errors.CassetteError` for a file that is no cassette,
    :class:`~toolreplay.wire.interactions.WireEpisodeError` when it holds no chat-completions
    request."""
    return episodes_from_interactions(load_recorded(Path(path)), configuration, question_id)


def episode_from_cassette(
    path: str | Path, configuration: str = "", question_id: str = ""
) -> Episode:
    """The one episode of the cassette at ``path`` (see :func:`episodes_from_cassette`);
    :class:`~toolreplay.wire.interactions.WireEpisodeError` when it holds none or several."""
    return episode_from_interactions(load_recorded(Path(path)), configuration, question_id)


__all__ = ["episode_from_cassette", "episodes_from_cassette", "load_recorded"]
