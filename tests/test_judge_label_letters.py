"""A letter right after a label's number is part of the label, not a temperature unit.

Reading a lower-case ``73f``/``22c`` as a temperature (a wttr.in-style tool result) made
``room 412 on floor 4f`` or ``bin 7c`` fabricated temperatures in suites that are not about
weather (found by review). A one-letter unit (``F``, ``C``, ``f``, ``c``: no degree sign, no
word) after a label word (floor, room, section, bin, seat, apartment, vitamin...) is no value;
the same letter after a temperature is still read and still checked.
"""

from __future__ import annotations

import pytest

from toolreplay.judging.failures import FABRICATED_VALUE, classify
from toolreplay.wire.episode import ToolResult

from .stock_domain import call
from .test_failures_answered import _any, _with_results

BOOKING = call("c1", "book_room", guest="Jane")


@pytest.mark.parametrize(
    ("result", "answer"),
    [
        ('{"room": 412, "floor": 4, "building": "C"}', "Booked: room 412 on floor 4f."),
        ('{"room": 412, "floor": 4}', "Booked: room 412 on Floor 4F."),
        ('{"apartment": "3C", "rent": 1200}', "Apartment 3c rents for $1200."),
        ('{"items": [{"sku": "A1", "qty": 5}]}', "You have 5 of item a1 in bin 7c."),
        ('{"section": "5C", "open": true}', "Section 5C is open."),
        ('{"gate": "12F"}', "Boarding at gate 12f, on time."),
        ('{"supplement": "vitamin C", "mg": 500}', "Take 500 mg of vitamin 12c daily."),
    ],
)
def test_a_letter_after_a_label_number_is_no_temperature(result: str, answer: str) -> None:
    episode = _with_results(answer, ToolResult(BOOKING, result))
    assert [f.mode for f in classify(episode, measure=_any())] == []


@pytest.mark.parametrize(
    ("result", "answer", "fabricated"),
    [
        ('{"temp": 22}', "It is 22c in Paris.", False),
        ('{"temp": 22}', "It is 25c in Paris.", True),
        ('{"temp_f": 73}', "It's 73F today.", False),
        ('{"temp_f": 73}', "It's 80F today.", True),
        ('{"temp_f": 73}', "Floor temperature: 80F.", True),  # a temperature after the label
    ],
)
def test_the_letter_after_a_temperature_is_still_read(
    result: str, answer: str, fabricated: bool
) -> None:
    episode = _with_results(answer, ToolResult(call("c1", "get_weather", city="Paris"), result))
    modes = [f.mode for f in classify(episode, measure=_any())]
    assert modes == ([FABRICATED_VALUE] if fabricated else [])
