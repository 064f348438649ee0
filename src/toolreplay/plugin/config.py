"""The VCR settings the pytest plugin applies to ``@pytest.mark.vcr`` tests."""

from __future__ import annotations

#: Query parameters never written to a cassette (and ignored when matching).
SECRET_QUERY_PARAMETERS = ("api_key", "apikey", "key", "access_token", "token")


def default_vcr_config() -> dict[str, object]:
    """The VCR settings the plugin applies, as ``vcr_config`` keys (serializer ``yaml`` is
    toolreplay's readable serializer registered under that name)."""
    from toolreplay.cassettes.format import MATCH_ON
    from toolreplay.cassettes.vcr import _before_record_request, _before_record_response

    return {
        "serializer": "yaml",
        "match_on": MATCH_ON,
        "before_record_request": _before_record_request,
        "before_record_response": _before_record_response,
        "decode_compressed_response": True,
        "filter_query_parameters": SECRET_QUERY_PARAMETERS,
    }


