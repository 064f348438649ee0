"""``python -m toolreplay.results > schemas/results.schema.json``: print the results schema."""

import json

from toolreplay.results.format import results_json_schema

print(json.dumps(results_json_schema(), ensure_ascii=False, indent=2))
