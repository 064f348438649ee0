"""Open-Meteo's public endpoints, by the manifest key that stores each (a set recorded against
them, or against the fixture server, keeps the URLs it used under the same keys)."""

TOOL_URLS = {
    "geocoding_url": "https://geocoding-api.open-meteo.com/v1/search",
    "forecast_url": "https://api.open-meteo.com/v1/forecast",
}
