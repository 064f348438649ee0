"""Fixtures of the example: where the converter API is, and which model the tests pin."""

from __future__ import annotations

import os

import pytest

from toolreplay import ModelSettings, model_settings


@pytest.fixture
def converter_url() -> str:
    """The converter API (any host works in replay: cassettes do not match on host/port)."""
    return os.environ.get("CONVERTER_URL") or "http://converter.invalid"


@pytest.fixture
def toolreplay_model_settings(record_mode: str) -> ModelSettings:
    """Pin the model name and the endpoint's path, so the recorded requests match whatever
    TOOLREPLAY_MODEL says (cassettes match on path, not host); the key is read only when
    recording. TOOLREPLAY_BASE_URL says where to record."""
    base_url = os.environ.get("TOOLREPLAY_BASE_URL") or "http://model.invalid/v1"
    return model_settings(base_url, "unit-demo", read_key=record_mode != "none")
