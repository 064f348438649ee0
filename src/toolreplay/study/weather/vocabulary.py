"""The weather study's judge vocabulary: :data:`WEATHER`, a
:class:`~toolreplay.judging.vocabulary.Vocabulary`.

Units of temperature, precipitation, percent and wind speed as people write them in Chinese
and English; the measures the weather questions declare; Open-Meteo's field names and the
shape of the toolsets' results (``{"value": 30.9, "unit": "°C"}``, the day from ``current``
and ``daily[i]``, the place from a ``get_weather`` result's ``place`` or the geocoding
candidate at the coordinates ``get_weather_by_coords`` was called with); day, field,
comparison and difference words. Named by ``STUDY.vocabulary`` and imported when the judge
first needs it. Imports nothing heavy.
"""

from __future__ import annotations

from toolreplay.judging.vocabulary import Comparison, FieldWord, Measure, Unit, Vocabulary, words

_F = (5 / 9, -160 / 9)


#: Every unit the full judges read, longest spellings first within a kind. Canonical units:
#: °C, mm, %, km/h.
UNITS: tuple[Unit, ...] = (
    Unit("摄氏度", r"摄氏度|攝氏度", "temperature"),
    Unit("华氏度", r"华氏度|華氏度", "temperature", *_F),
    Unit("°F", r"°\s?(?-i:F)(?![a-zA-Z])", "temperature", *_F),
    Unit("℉", r"℉", "temperature", *_F),
    Unit(
        "degrees Fahrenheit", r"degrees?\s+(?:fahrenheit|(?-i:F)(?![a-zA-Z]))", "temperature", *_F
    ),
    Unit("Fahrenheit", r"fahrenheit\b", "temperature", *_F),
    Unit("F", r"(?-i:F)(?![a-zA-Z])", "temperature", *_F),
    Unit("°C", r"°\s?(?-i:C)(?![a-zA-Z])", "temperature"),
    Unit("℃", r"℃", "temperature"),
    Unit(
        "degrees Celsius", r"degrees?\s+(?:celsius|centigrade|(?-i:C)(?![a-zA-Z]))", "temperature"
    ),
    Unit("Celsius", r"(?:celsius|centigrade)\b", "temperature"),
    Unit("C", r"(?-i:C)(?![a-zA-Z])", "temperature"),
    Unit("度", r"度(?![数數过過达達])", "temperature", explicit=False),
    Unit("°", r"°(?![\d′'])", "temperature", explicit=False),
    Unit("degrees", r"degrees?\b", "temperature", explicit=False),
    Unit("mm", r"mm\b|毫米|millimet(?:er|re)s?\b", "precipitation"),
    Unit("cm", r"cm\b|厘米|centimet(?:er|re)s?\b", "precipitation", 10.0),
    Unit("inch", r"inch(?:es)?\b|英寸|″", "precipitation", 25.4),
    # "in" for inches only before punctuation or a word of rain ("0.1 in of rain", "0.1 in.",
    # "0.1 in (2.6 mm)", "0.1 in expected"), never in "29 in Shanghai"
    Unit(
        "in",
        r"in(?:\.|(?=[ \t]*(?:(?:of|expected|total|forecast|rain\w*|precip\w*)\b"
        r"|[,;:()（）\n，。；]|$)))",
        "precipitation",
        25.4,
    ),
    Unit("%", r"[%％]|per\s?cent\b", "percent"),
    # tenths as Chinese writes probabilities: 六成 = 60 %, 三成左右 ≈ 30 % (not 成都, 成为,
    # nor 八成会下雨, "most likely")
    Unit("成", r"成(?![都功为為了本熟员員绩績果就立会會要是能不])", "percent", 10.0),
    Unit("km/h", r"km/h|kph\b|公里/小时|千米/小时|公里每小时", "wind"),
    Unit("m/s", r"m/s|米/秒|米每秒", "wind", 3.6),
    Unit("mph", r"mph\b", "wind", 1.609344),
    Unit("knots", r"knots?\b|kn\b", "wind", 1.852),
)


#: Unit words written *before* a number, and the unit (by name) they give it.
PREFIX_UNITS: tuple[tuple[str, str], ...] = (
    (r"摄氏|攝氏", "摄氏度"),
    (r"华氏|華氏", "华氏度"),
    (r"百分之", "%"),
    (r"fahrenheit", "Fahrenheit"),
    (r"celsius", "Celsius"),
)


#: A percentage answers a rain question only in a clause about rain (not humidity).
RAIN_CONTEXT = r"降水|降雨|下雨|雨|precip|rain|shower"


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


#: The measures the weather questions declare (``none`` is the engine's).
MEASURES: tuple[Measure, ...] = (
    Measure("temperature", frozenset({"temperature"})),
    Measure(
        "precipitation",
        frozenset({"precipitation", "percent"}),
        context={"percent": RAIN_CONTEXT},
        fields={"percent": "probab"},  # a percentage answers rain only as a probability
    ),
    Measure("comparison", frozenset({"temperature"}), compare=HOTTEST),
    Measure("wind", frozenset({"wind"})),  # a wind question needs a wind speed
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
    ("probability", "%"), ("humidity", "%"), ("temperature", "°C"), ("precipitation", "mm"),
    ("rain", "mm"), ("wind", "km/h"),
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


WEATHER = Vocabulary(
    name="weather",
    units=UNITS,
    measures=MEASURES,
    prefix_units=PREFIX_UNITS,
    bracket_units=r"°\s?[CF]|℃|℉|mm|毫米|%|km/h|m/s|mph",
    implicit_range=(-90.0, 60.0),  # a bare 度 beyond it is a latitude or longitude
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
    ignored_keys=IGNORED_KEYS,
    ignored_suffixes=("_id", "_code"),
    day_keys={"$.current": 0},
    day_lists=("$.daily",),
    place_key="place",
    candidates_key="candidates",
    place_name="name",
    place_region="admin1",
    coordinate_keys=("latitude", "longitude"),
    narrow_name="celsius-only",
    narrow_units=("°C",),
)
