"""The VCR settings the pytest plugin applies, and which tests it applies them to."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest

#: Query parameters never written to a cassette (and ignored when matching).
SECRET_QUERY_PARAMETERS = ("api_key", "apikey", "key", "access_token", "token")

#: The marker that opts a test, a class or a module (``pytestmark``) in;
#: ``@pytest.mark.toolreplay(False)`` opts it out under :data:`INI_OPTION`.
MARKER = "toolreplay"

#: The ini option that opts a whole suite in (``toolreplay_cassettes = true``).
INI_OPTION = "toolreplay_cassettes"

#: The plugin's fixtures whose requests need toolreplay's cassettes: a test that uses one of
#: them (directly or through another fixture) is opted in.
OPT_IN_FIXTURES = frozenset({"chat_model", "toolreplay_model_settings"})


def uses_toolreplay(item: pytest.Item) -> bool:
    """Whether toolreplay's cassettes apply to ``item``: its closest ``toolreplay`` marker
    says so (``toolreplay`` or ``toolreplay(True)`` in, ``toolreplay(False)`` out); else it
    uses one of :data:`OPT_IN_FIXTURES`; else the ini option :data:`INI_OPTION`. Every other
    ``@pytest.mark.vcr`` test runs as pytest-recording runs it without toolreplay."""
    marker = item.get_closest_marker(MARKER)
    if marker is not None:
        return bool(marker.args[0] if marker.args else marker.kwargs.get("enabled", True))
    if OPT_IN_FIXTURES & set(getattr(item, "fixturenames", ())):
        return True
    return bool(item.config.getini(INI_OPTION))


def default_vcr_config() -> dict[str, object]:
    """The VCR settings the plugin applies to the tests that opt in, as ``vcr_config`` keys
    (serializer ``yaml`` is toolreplay's readable serializer registered under that name)."""
    from toolreplay.cassettes.format import MATCH_ON
    from toolreplay.cassettes.vcr import before_record_request, before_record_response

    return {
        "serializer": "yaml",
        "match_on": MATCH_ON,
        "before_record_request": before_record_request,
        "before_record_response": before_record_response,
        "decode_compressed_response": True,
        "filter_query_parameters": SECRET_QUERY_PARAMETERS,
    }
