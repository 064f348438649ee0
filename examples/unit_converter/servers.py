"""What the example records against, on loopback: the converter API and a small scripted
OpenAI-compatible model. Only needed to (re-)record; replay uses the cassettes.

Run both and print the environment to record with::

    python servers.py    # then, in another shell, the printed exports and
                         # pytest --record-mode=rewrite
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from toolreplay.doubles.loopback import serve

FACTORS = {"m": 1.0, "km": 1000.0, "mi": 1609.344, "ft": 0.3048, "kg": 1.0, "lb": 0.45359237}
KIND = {"m": "length", "km": "length", "mi": "length", "ft": "length", "kg": "mass", "lb": "mass"}


def converter_api(method: str, path: str, query: dict[str, str], body: bytes) -> tuple[int, Any]:
    """``GET /convert?value=&from=&to=``."""
    if method != "GET" or path != "/convert":
        return 404, {"error": True, "reason": f"no {method} {path}"}
    src, dst = query.get("from", ""), query.get("to", "")
    if src not in FACTORS or dst not in FACTORS or KIND[src] != KIND[dst]:
        return 400, {"error": True, "reason": f"cannot convert {src!r} to {dst!r}"}
    value = float(query["value"]) * FACTORS[src] / FACTORS[dst]
    return 200, {"value": round(value, 3), "unit": dst}


QUESTION = re.compile(r"([\d.]+)\s*(\w+)\s+(?:in|to)\s+(\w+)")


def scripted_model(method: str, path: str, query: dict[str, str], body: bytes) -> tuple[int, Any]:
    """A deterministic chat-completions endpoint: asks for every "<n> <unit> in <unit>" in
    the question, then answers from the tool results."""
    request = json.loads(body)
    messages = request["messages"]
    question = next(m["content"] for m in messages if m["role"] == "user")
    results = [json.loads(m["content"]) for m in messages if m["role"] == "tool"]
    message: dict[str, Any]
    if not results and request.get("tools"):
        calls = [
            {
                "id": f"call_{n}",
                "type": "function",
                "function": {
                    "name": "convert_units",
                    "arguments": json.dumps({"value": float(v), "from_unit": a, "to_unit": b}),
                },
            }
            for n, (v, a, b) in enumerate(QUESTION.findall(question), start=1)
        ]
        message = {"role": "assistant", "content": None, "tool_calls": calls}
    else:
        text = "; ".join(
            f"{r['value']} {r['unit']}" if "value" in r else f"error: {r['error']}" for r in results
        )
        message = {"role": "assistant", "content": text or "I cannot tell."}
    return 200, {
        "id": f"chatcmpl-demo-{len(messages)}",
        "object": "chat.completion",
        "created": 0,
        "model": request["model"],
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": 10 * len(messages),
            "completion_tokens": 5,
            "total_tokens": 10 * len(messages) + 5,
        },
    }


@contextmanager
def servers() -> Iterator[dict[str, str]]:
    """Start both on loopback; yields the environment the tests read to record."""
    with ExitStack() as stack:
        api = stack.enter_context(serve(converter_api))
        model = stack.enter_context(serve(scripted_model))
        yield {
            "CONVERTER_URL": api,
            "TOOLREPLAY_BASE_URL": f"{model}/v1",
            # the local model needs no real key; name the variable that holds the one it gets
            "TOOLREPLAY_API_KEY_ENV": "UNIT_DEMO_KEY",
            "UNIT_DEMO_KEY": "local-demo",
        }


if __name__ == "__main__":
    import time

    with servers() as env:
        for key, value in env.items():
            print(f"export {key}={value}")
        while True:
            time.sleep(60)
