"""The weather study's words in the report's fidelity section: the title and lead sentence of
the checks it says in its own terms (the others keep the engine's words), and the glossary,
naming the study's heuristics, places and judges."""

#: Plain-words title and lead sentence per fidelity check (what it asks, before the result).
FIDELITY_CHECKS: dict[str, tuple[str, str]] = {
    "baseline_heuristics": (
        "Is the baseline the reference's best version?",
        "The one-shot tool get_weather(city) must keep all three heuristics of the reference "
        "(prefer admin seats, then the largest population, and retry with 市 appended), and "
        "each must be seen acting on a recorded geocoding answer.",
    ),
    "baseline_properties": (
        "Does the baseline pick as the reference on any geocoding answer?",
        "The baseline's get_weather code is run on generated geocoding answers (population "
        "orders and ties, every seat level, nothing found, names with 市 and in other scripts; "
        "a fixed seed, so the same cases every run) next to the reference: a weakened "
        "heuristic fails here even when no question's answer gives it something to decide.",
    ),
    "judge_breadth": (
        "Is the judge as broad as the questions?",
        "Every question's measure (a temperature, rain, a comparison) must be accepted by the "
        "judge in use; a narrower °C-only judge is run alongside to show what it would miss.",
    ),
    "near_miss": (
        "What would a sloppier comparison have shown?",
        "The faithful table stands next to the one a weakened baseline (no 市 retry) and a "
        "narrow judge (°C only) give: the near miss this audit guards against.",
    ),
}


#: Terms the fidelity section uses, explained once.
GLOSSARY: tuple[tuple[str, str], ...] = (
    (
        "heuristics",
        "the three rules get_weather(city) uses to pick a place among the geocoder's "
        "candidates: admin_seat (prefer an administrative seat), population_order (then the "
        "largest population), shi_retry (if no seat is found, ask again with 市, 'city', "
        "appended).",
    ),
    (
        "admin seat, PPLC",
        "GeoNames feature codes for a seat of government: PPLC a capital, PPLA–PPLA4 the seat "
        "of a first- to fourth-order division; PPL is any other populated place.",
    ),
    (
        "ablation",
        "the same baseline replayed with one heuristic switched off, to see what that "
        "heuristic changes.",
    ),
    (
        "judge breadth",
        "whether the judge accepts every kind of measured value the questions ask for; a judge "
        "that only accepts °C fails a correct rain forecast.",
    ),
    (
        "near miss",
        "the table a less careful study would have published: the baseline without its 市 "
        "retry, judged by the °C-only judge.",
    ),
    (
        "arm parity",
        "every configuration (arm) ran under the same model, prompt, settings and questions.",
    ),
)
