"""The weather study's judge vocabulary: :data:`WEATHER`, a
:class:`~toolreplay.judging.vocabulary.Vocabulary`.

The measures the weather questions declare (:data:`MEASURES`: temperature, precipitation,
comparison, wind) are :class:`~toolreplay.evals.MeasureDeclaration` s, as an eval
file's ``measures:`` are, with their units as people write them in Chinese and English; they
are added to :data:`WEATHER_WORDS` by the same mechanism that adds an eval file's
(:func:`toolreplay.judging.measures.declared_vocabulary`). The words: Open-Meteo's field
names and the shape of the toolsets' results (``{"value": 30.9, "unit": "°C"}``, the day
from ``current`` and ``daily[i]``, the place from a ``get_weather`` result's ``place`` or
the geocoding candidate at the coordinates ``get_weather_by_coords`` was called with); day,
field, comparison and difference words. Named by ``STUDY.vocabulary`` and imported when the
judge first needs it. Imports nothing heavy.
"""

from __future__ import annotations

from toolreplay.evals import MeasureDeclaration, UnitDeclaration
from toolreplay.judging.measures import declared_vocabulary
from toolreplay.judging.vocabulary import Comparison, FieldWord, Vocabulary, words

_F = (5 / 9, -160 / 9)

#: The air temperatures a bare degree can state, °C: the records are −89.2 °C and 56.7 °C.
_AIR = (-90.0, 60.0)

# a lower-case ``f``/``c`` is the scale only where nothing else can be meant: right after the
# number's digits (``73f``, ``22c``: not after a letter, ``0x7f``, nor before a letter or
# digit), or set apart from it only at the end of a clause (``73 f``, ``73 f,``; never ``2 c
# flour``, cups, nor ``1 c. sugar``).
def _lower(letter: str) -> str:
    return (
        rf"|(?<=[0-9])(?<![a-zA-Z#][0-9])(?<![a-zA-Z#][0-9]{{2}})(?<![a-zA-Z#][0-9]{{3}})"
        rf"(?-i:{letter})(?![a-zA-Z0-9])"
        rf"|(?<=[0-9]\s)(?-i:{letter})(?=[ \t]*(?:[,;:)）\]!?，。；\n]|\.?$))"
    )


#: Temperature as written after a number, longest spellings first; canonical °C. The words
#: before a number (摄氏, 华氏, fahrenheit, celsius) name the unit the number is in.
TEMPERATURE_UNITS: tuple[UnitDeclaration, ...] = (
    UnitDeclaration("摄氏度", pattern=r"摄氏度|攝氏度", before_pattern=r"摄氏|攝氏"),
    UnitDeclaration(
        "华氏度", pattern=r"华氏度|華氏度", before_pattern=r"华氏|華氏", scale=_F[0], offset=_F[1]
    ),
    UnitDeclaration("°F", pattern=r"°\s?(?-i:F)(?![a-zA-Z])", scale=_F[0], offset=_F[1]),
    UnitDeclaration("℉", pattern=r"℉", scale=_F[0], offset=_F[1]),
    UnitDeclaration(
        "degrees Fahrenheit",
        pattern=r"degrees?\s+(?:fahrenheit|(?-i:F)(?![a-zA-Z]))",
        scale=_F[0],
        offset=_F[1],
    ),
    UnitDeclaration(
        "Fahrenheit",
        pattern=r"fahrenheit\b",
        before_pattern=r"fahrenheit",
        scale=_F[0],
        offset=_F[1],
    ),
    UnitDeclaration(
        "F", pattern=r"(?-i:F)(?![a-zA-Z])" + _lower("f"), scale=_F[0], offset=_F[1]
    ),
    UnitDeclaration("°C", pattern=r"°\s?(?-i:C)(?![a-zA-Z])"),
    UnitDeclaration("℃", pattern=r"℃"),
    UnitDeclaration(
        "degrees Celsius", pattern=r"degrees?\s+(?:celsius|centigrade|(?-i:C)(?![a-zA-Z]))"
    ),
    UnitDeclaration("Celsius", pattern=r"(?:celsius|centigrade)\b", before_pattern=r"celsius"),
    UnitDeclaration("C", pattern=r"(?-i:C)(?![a-zA-Z])" + _lower("c")),
    # kelvin (OpenWeatherMap's default units=standard): a K set apart from the number only
    # where an air temperature can be (282.55 K; never 10K, ten thousand, nor a 5 K race),
    # the word or °K always
    UnitDeclaration(
        "K",
        pattern=r"(?<=\s)(?-i:K)(?![a-zA-Z0-9])",
        offset=-273.15,
        plausible=(150.0, 350.0),
    ),
    UnitDeclaration(
        "kelvin",
        pattern=r"kelvins?\b|°\s?(?-i:K)(?![a-zA-Z])",
        before_pattern=r"kelvin",
        offset=-273.15,
    ),
    # a bare degree sign or word: °C, or °F as English writes it (Day 75°, 73 degrees and
    # sunny), in the scale where it is an air temperature (73 degrees: °F, never °C; 30
    # degrees: either); 度 is always Celsius
    UnitDeclaration("度", pattern=r"度(?![数數过過达達])", explicit=False, plausible=_AIR),
    UnitDeclaration(
        "°", pattern=r"°(?![\d′'])", explicit=False, readings=("°F",), plausible=_AIR
    ),
    UnitDeclaration(
        "degrees", pattern=r"degrees?\b", explicit=False, readings=("°F",), plausible=_AIR
    ),
)


#: A percentage answers a rain question only in a clause about rain (not humidity).
RAIN_CONTEXT = r"降水|降雨|下雨|雨|precip|rain|shower"


#: Precipitation amounts (canonical mm), and the percentages of its probability (kind
#: ``percent``: 百分之 before a number; 成, tenths, as Chinese writes probabilities).
PRECIPITATION_UNITS: tuple[UnitDeclaration, ...] = (
    UnitDeclaration("mm", pattern=r"mm\b|毫米|millimet(?:er|re)s?\b"),
    UnitDeclaration("cm", pattern=r"cm\b|厘米|centimet(?:er|re)s?\b", scale=10.0),
    UnitDeclaration("inch", pattern=r"inch(?:es)?\b|英寸|″", scale=25.4),
    # "in" for inches only before punctuation or a word of rain ("0.1 in of rain", "0.1 in.",
    # "0.1 in (2.6 mm)", "0.1 in expected"), never in "29 in Shanghai"
    UnitDeclaration(
        "in",
        pattern=r"in(?:\.|(?=[ \t]*(?:(?:of|expected|total|forecast|rain\w*|precip\w*)\b"
        r"|[,;:()（）\n，。；]|$)))",
        scale=25.4,
    ),
    UnitDeclaration("%", pattern=r"[%％]|per\s?cent\b", before_pattern=r"百分之", kind="percent"),
    # tenths as Chinese writes probabilities: 六成 = 60 %, 三成左右 ≈ 30 % (not 成都, 成为,
    # nor 八成会下雨, "most likely")
    UnitDeclaration(
        "成",
        pattern=r"成(?![都功为為了本熟员員绩績果就立会會要是能不])",
        scale=10.0,
        kind="percent",
    ),
)


#: Wind speed, canonical km/h.
WIND_UNITS: tuple[UnitDeclaration, ...] = (
    UnitDeclaration("km/h", pattern=r"km/h|kph\b|公里/小时|千米/小时|公里每小时"),
    UnitDeclaration("m/s", pattern=r"m/s|米/秒|米每秒", scale=3.6),
    UnitDeclaration("mph", pattern=r"mph\b", scale=1.609344),
    UnitDeclaration("knots", pattern=r"knots?\b|kn\b", scale=1.852),
)


#: The hottest place of a comparison, and the words around it.
HOTTEST = Comparison(
    kind="temperature",
    fields=("max", "current"),  # the day's maximum; for today, else the current temperature
    # a superlative with a number right after it is a field, not a conclusion (气温最高 31℃)
    superlative=(
        r"最热|最熱|最暖和?|最炎热|(?:气温|氣溫|温度|溫度)最高(?!\s*[:：]?\s*[-−]?\d)"
        r"|居首|排名第一|排第一|the hottest|hottest|the warmest|warmest|tops the list"
    ),
    before=r"的|的天气|的气温|的温度|\s?is|\s?was",
    after=r"的|的城市|的是|城市是|是|的地方是|\s+(?:city\s+)?is|:|：",
    adjective="hottest",
    plural="temperatures",
    least=(
        r"最凉快?|最涼快?|最冷|最凉爽|最涼爽|(?:气温|氣溫|温度|溫度)最低(?!\s*[:：]?\s*[-−]?\d)"
        r"|the coolest|coolest|the coldest|coldest|the mildest|mildest"
    ),
    least_adjective="coolest",
    more=words(r"热|熱|暖和?|高|炎热|闷热", r"hotter|warmer|higher"),
    less=words(r"凉快?|涼快?|凉爽|冷|低", r"cooler|colder|lower|milder"),
    descending=words(
        r"从高到低|由高到低|從高到低|从热到冷|由热到冷|从热到凉|由热到凉",
        r"from (?:the )?(?:hottest|warmest|highest)",
    ),
    ascending=words(
        r"从低到高|由低到高|從低到高|从冷到热|由冷到热|从凉到热|由凉到热",
        r"from (?:the )?(?:coolest|coldest|lowest)",
    ),
)


#: The measures the weather questions declare (``none`` is the engine's), declared as an eval
#: file declares its own (:class:`~toolreplay.evals.MeasureDeclaration`) and made the
#: judge's by the same mechanism (:func:`toolreplay.judging.measures.declared_vocabulary`).
MEASURES: tuple[MeasureDeclaration, ...] = (
    # plausible ranges (what makes a bound or a range say something, judging.bounds): the
    # recorded extremes of air temperature (−89.2 °C, 56.7 °C), a probability's 0–100 %, a
    # day's rain and a wind speed short of the extremes a forecast gives
    MeasureDeclaration("temperature", TEMPERATURE_UNITS, plausible={"temperature": (-90, 60)}),
    MeasureDeclaration(
        "precipitation",
        PRECIPITATION_UNITS,
        context={"percent": RAIN_CONTEXT},
        # a percentage answers rain only as a probability (wttr.in: chanceofrain)
        value_fields={"percent": "probab|chanceofrain"},
        plausible={"precipitation": (0, 200), "percent": (0, 100)},
    ),
    MeasureDeclaration("comparison", (), kinds=("temperature",), compare=HOTTEST),
    # a wind question needs a wind speed
    MeasureDeclaration("wind", WIND_UNITS, plausible={"wind": (0, 200)}),
)


#: Numbers under these keys are places, identifiers or times, never measurements.
IGNORED_KEYS = frozenset(
    {
        "latitude", "longitude", "lat", "lon", "lng", "elevation", "population", "id",
        "timezone", "utc_offset_seconds", "generationtime_ms", "time", "date", "interval",
    }
)  # fmt: skip


#: A bare number (no unit beside it) counts only when its key says what it measures.
KEY_UNITS: tuple[tuple[str, str], ...] = (
    ("chance", "%"),  # wttr.in's chanceofrain, chanceofwindy: a probability, not rain or wind
    ("probability", "%"), ("humidity", "%"), ("temperature", "°C"), ("precipitation", "mm"),
    # a wind chill and a felt temperature are temperatures, not wind speeds (wind_chill,
    # windchill, WindChillC, feels_like)
    ("chill", "°C"), ("feels", "°C"), ("rain", "mm"), ("wind", "km/h"),
)  # fmt: skip


DAY_WORDS: tuple[tuple[int, str], ...] = (
    (2, words(r"后天|後天", r"day after tomorrow")),
    (1, words(r"明天|明日", r"tomorrow")),
    (
        0,
        words(r"今天|今日|今晚|现在|現在|当前|當前|目前|此刻|实时", r"today|tonight|now|currently"),
    ),
)


FIELD_WORDS: tuple[FieldWord, ...] = (
    FieldWord(
        "current",
        words(r"当前|當前|现在|現在|目前|此刻|实时|實時", r"now|currently|current"),
        path=r"\$\.current",
        clause_only=True,
    ),
    FieldWord("max", words(r"最高|高温", r"high(?:est|s)?|max(?:imum)?|up to"), field="max"),
    FieldWord("min", words(r"最低|低温", r"low(?:est|s)?|min(?:imum)?"), field="min"),
)


#: Everything but the measures: day, field and difference words, Open-Meteo's result shapes.
WEATHER_WORDS = Vocabulary(
    name="weather",
    units=(),
    measures=(),
    bracket_units=r"°\s?[CF]|℃|℉|mm|毫米|%|km/h|m/s|mph",
    implicit_range=(-90.0, 60.0),  # a bare 度 beyond it is a latitude or longitude
    day_names=("today", "tomorrow"),  # a question's day: Open-Meteo's daily index 0 or 1
    day_words=DAY_WORDS,
    field_words=FIELD_WORDS,
    field_kinds=frozenset({"temperature"}),
    # a value stated as a difference: right after 温差/相差/比…高 (or "a difference of"), or
    # right before "warmer/cooler/higher/lower (than)"
    difference_before=(
        r"温差|溫差|相差|差了|差距|高出|低出|比[^，,。；;]{0,12}[高低暖冷热熱凉涼]"
        r"|(?<![a-z])difference (?:of|is)"
    ),
    difference_after=r"warmer|cooler|colder|hotter|higher|lower|more|less|below|above",
    value_keys=("value", "unit"),
    key_units=KEY_UNITS,
    # tempC, temp_max, maxtempF, FeelsLikeF, WindChillC, precipMM (wttr.in, OpenWeatherMap)
    key_tokens=(("temp", "°C"), ("feels", "°C"), ("chill", "°C"), ("precip", "mm")),
    key_unit_words=(("kmph", "km/h"), ("miles", "mph"), ("mph", "mph")),
    unit_systems=(("metric", "°C"), ("imperial", "°F"), ("standard", "K")),
    bare_above=(("°C", 150.0, "K"),),
    ignored_keys=IGNORED_KEYS,
    ignored_suffixes=("_id", "_code"),
    # a wind's direction in degrees, not its speed (winddirDegree, wind_deg, wind_direction_10m,
    # wind_bearing); a temperature's key may say degrees (temp_deg_c, tempDegreeF)
    ignored_words=frozenset(
        {"direction", "dir", "winddirection", "winddir", "deg", "degree", "degrees", "bearing"}
    ),
    ignored_words_kinds=frozenset({"wind"}),
    day_keys={"$.current": 0},
    day_lists=("$.daily",),
    place_key="place",
    candidates_key="candidates",
    place_name="name",
    place_suffixes=("市",),  # 宁德 and 宁德市 are one city (the study's 市 retry)
    place_region="admin1",
    coordinate_keys=("latitude", "longitude"),
    narrow_name="celsius-only",
    narrow_units=("°C",),
)


#: The weather study's vocabulary: its words, with its measures declared.
WEATHER = declared_vocabulary(WEATHER_WORDS, MEASURES)
