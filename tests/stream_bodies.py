# ruff: noqa: E501  (events are kept whole, as the providers sent them)
"""Real streamed Chat Completions bodies (server-sent events), trimmed, for the stream assembler
and the wire reader. Each is a list of events as the provider sent them (an event's lines joined by
``\n``); :func:`body` joins them into the bytes on the wire. Sources, all public test data:

- OpenAI: pydantic/pydantic-ai, tests/models/cassettes/test_openai/
  test_run_stream_sync_streams_real_model.yaml (both replies, whole);
- Groq: pydantic/pydantic-ai, tests/models/cassettes/test_groq/test_tool_use_failed_error_streaming.yaml
  (reply 2: a tool call, reasoning chunks trimmed; reply 1: its ``event: error``, middle trimmed);
- DeepSeek: shediao/ai.cli, tests/test_tool_calls_stream_response.cc (``response1``, whole: a tool call
  with its arguments in eight pieces); pydantic/pydantic-ai, tests/models/cassettes/test_deepseek/
  test_deepseek_model_thinking_stream.yaml (``reasoning_content``, middle trimmed);
- Mistral: simonw/llm-mistral, tests/test_mistral.py (the ``mocked_tool_stream`` bodies, whole;
  ``test_split_streaming_tool_arguments``: a name repeated empty on the second chunk);
- OpenRouter: pydantic/pydantic-ai, tests/models/cassettes/test_openrouter/
  test_openrouter_stream_error.yaml (a chunk holding ``error`` mid-stream; comment lines trimmed)
  and test_openrouter_stream_with_reasoning.yaml (an encrypted ``reasoning_details`` item, comment
  lines; content chunks trimmed).
"""

from __future__ import annotations

# fmt: off

OPENAI_TOOL_CALL = [
    'data: {"id":"chatcmpl-Dx0XpqH8w09uBXwq1zFGYdETjtnEl","object":"chat.completion.chunk","created":1782955817,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_d0469e1700","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_ZR5UUuTt3pf61kjwAJIYdVMj","type":"function","function":{"name":"get_capital","arguments":""}}],"refusal":null},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"C63r"}',
    'data: {"id":"chatcmpl-Dx0XpqH8w09uBXwq1zFGYdETjtnEl","object":"chat.completion.chunk","created":1782955817,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_d0469e1700","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\\""}}]},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"qfQVOwfh62oUst"}',
    'data: {"id":"chatcmpl-Dx0XpqH8w09uBXwq1zFGYdETjtnEl","object":"chat.completion.chunk","created":1782955817,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_d0469e1700","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"country"}}]},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"UqdZk18gUR"}',
    'data: {"id":"chatcmpl-Dx0XpqH8w09uBXwq1zFGYdETjtnEl","object":"chat.completion.chunk","created":1782955817,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_d0469e1700","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\\":\\""}}]},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"76zA6BxgBTLA"}',
    'data: {"id":"chatcmpl-Dx0XpqH8w09uBXwq1zFGYdETjtnEl","object":"chat.completion.chunk","created":1782955817,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_d0469e1700","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"UK"}}]},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"QpK3qslFTUGILk1"}',
    'data: {"id":"chatcmpl-Dx0XpqH8w09uBXwq1zFGYdETjtnEl","object":"chat.completion.chunk","created":1782955817,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_d0469e1700","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\\"}"}}]},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"H5PIzYSIGNFGWO"}',
    'data: {"id":"chatcmpl-Dx0XpqH8w09uBXwq1zFGYdETjtnEl","object":"chat.completion.chunk","created":1782955817,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_d0469e1700","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}],"usage":null,"obfuscation":"VskHzNI7KMRUodI"}',
    'data: {"id":"chatcmpl-Dx0XpqH8w09uBXwq1zFGYdETjtnEl","object":"chat.completion.chunk","created":1782955817,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_d0469e1700","choices":[],"usage":{"prompt_tokens":53,"completion_tokens":15,"total_tokens":68,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},"obfuscation":"khVgg3RsaN"}',
    'data: [DONE]',
]

OPENAI_ANSWER = [
    'data: {"id":"chatcmpl-Dx0Xq5Xx9rHB2ehcHZCRDsnuymUXc","object":"chat.completion.chunk","created":1782955818,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_d0469e1700","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"HM7mrUsjk"}',
    'data: {"id":"chatcmpl-Dx0Xq5Xx9rHB2ehcHZCRDsnuymUXc","object":"chat.completion.chunk","created":1782955818,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_d0469e1700","choices":[{"index":0,"delta":{"content":"The"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"auU6fTns"}',
    'data: {"id":"chatcmpl-Dx0Xq5Xx9rHB2ehcHZCRDsnuymUXc","object":"chat.completion.chunk","created":1782955818,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_d0469e1700","choices":[{"index":0,"delta":{"content":" capital"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"oHb"}',
    'data: {"id":"chatcmpl-Dx0Xq5Xx9rHB2ehcHZCRDsnuymUXc","object":"chat.completion.chunk","created":1782955818,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_d0469e1700","choices":[{"index":0,"delta":{"content":" of"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"CduGPpSo"}',
    'data: {"id":"chatcmpl-Dx0Xq5Xx9rHB2ehcHZCRDsnuymUXc","object":"chat.completion.chunk","created":1782955818,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_d0469e1700","choices":[{"index":0,"delta":{"content":" the"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"uYGzrM6"}',
    'data: {"id":"chatcmpl-Dx0Xq5Xx9rHB2ehcHZCRDsnuymUXc","object":"chat.completion.chunk","created":1782955818,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_d0469e1700","choices":[{"index":0,"delta":{"content":" UK"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"OYcXbxcY"}',
    'data: {"id":"chatcmpl-Dx0Xq5Xx9rHB2ehcHZCRDsnuymUXc","object":"chat.completion.chunk","created":1782955818,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_d0469e1700","choices":[{"index":0,"delta":{"content":" is"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"fcc4yi1x"}',
    'data: {"id":"chatcmpl-Dx0Xq5Xx9rHB2ehcHZCRDsnuymUXc","object":"chat.completion.chunk","created":1782955818,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_d0469e1700","choices":[{"index":0,"delta":{"content":" London"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"A4Z2"}',
    'data: {"id":"chatcmpl-Dx0Xq5Xx9rHB2ehcHZCRDsnuymUXc","object":"chat.completion.chunk","created":1782955818,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_d0469e1700","choices":[{"index":0,"delta":{"content":"."},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"Jovwz5hY6J"}',
    'data: {"id":"chatcmpl-Dx0Xq5Xx9rHB2ehcHZCRDsnuymUXc","object":"chat.completion.chunk","created":1782955818,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_d0469e1700","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null,"obfuscation":"RTaww"}',
    'data: {"id":"chatcmpl-Dx0Xq5Xx9rHB2ehcHZCRDsnuymUXc","object":"chat.completion.chunk","created":1782955818,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_d0469e1700","choices":[],"usage":{"prompt_tokens":78,"completion_tokens":9,"total_tokens":87,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},"obfuscation":"dhWUdLZO659"}',
    'data: [DONE]',
]

GROQ_TOOL_CALL = [
    'data: {"id":"chatcmpl-e35442a8-12c0-4fb4-8be4-0e51727ce7b7","object":"chat.completion.chunk","created":1771434740,"model":"openai/gpt-oss-120b","system_fingerprint":"fp_caa2017b29","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"x_groq":{"id":"req_01khrvt32ze9rb75za4xqmdz13","seed":1367355884}}',
    'data: {"id":"chatcmpl-e35442a8-12c0-4fb4-8be4-0e51727ce7b7","object":"chat.completion.chunk","created":1771434740,"model":"openai/gpt-oss-120b","system_fingerprint":"fp_caa2017b29","choices":[{"index":0,"delta":{"reasoning":"We","channel":"analysis"},"logprobs":null,"finish_reason":null}]}',
    'data: {"id":"chatcmpl-e35442a8-12c0-4fb4-8be4-0e51727ce7b7","object":"chat.completion.chunk","created":1771434740,"model":"openai/gpt-oss-120b","system_fingerprint":"fp_caa2017b29","choices":[{"index":0,"delta":{"reasoning":" need","channel":"analysis"},"logprobs":null,"finish_reason":null}]}',
    'data: {"id":"chatcmpl-e35442a8-12c0-4fb4-8be4-0e51727ce7b7","object":"chat.completion.chunk","created":1771434740,"model":"openai/gpt-oss-120b","system_fingerprint":"fp_caa2017b29","choices":[{"index":0,"delta":{"reasoning":" to","channel":"analysis"},"logprobs":null,"finish_reason":null}]}',
    'data: {"id":"chatcmpl-e35442a8-12c0-4fb4-8be4-0e51727ce7b7","object":"chat.completion.chunk","created":1771434740,"model":"openai/gpt-oss-120b","system_fingerprint":"fp_caa2017b29","choices":[{"index":0,"delta":{"tool_calls":[{"id":"fc_bfb39741-3748-4def-9886-a93fc9c64a90","type":"function","function":{"name":"get_something_by_name","arguments":"{\\"name\\":\\"example\\"}"},"index":0}]},"logprobs":null,"finish_reason":null}]}',
    'data: {"id":"chatcmpl-e35442a8-12c0-4fb4-8be4-0e51727ce7b7","object":"chat.completion.chunk","created":1771434740,"model":"openai/gpt-oss-120b","system_fingerprint":"fp_caa2017b29","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}],"x_groq":{"id":"req_01khrvt32ze9rb75za4xqmdz13","usage":{"queue_time":0.00491786,"prompt_tokens":304,"prompt_time":0.01460151,"completion_tokens":49,"completion_time":0.11216431,"total_tokens":353,"total_time":0.12676582,"completion_tokens_details":{"reasoning_tokens":23}}},"usage":{"queue_time":0.00491786,"prompt_tokens":304,"prompt_time":0.01460151,"completion_tokens":49,"completion_time":0.11216431,"total_tokens":353,"total_time":0.12676582,"completion_tokens_details":{"reasoning_tokens":23}}}',
    'data: [DONE]',
]

GROQ_ERROR_EVENT = [
    'data: {"id":"chatcmpl-4f39f3af-3267-4ac1-a0cf-6aa7451877dc","object":"chat.completion.chunk","created":1771434740,"model":"openai/gpt-oss-120b","system_fingerprint":"fp_e8236260a9","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"x_groq":{"id":"req_01khrvt2r6e9rb7e8qsg86ywkw","seed":27718886}}',
    'data: {"id":"chatcmpl-4f39f3af-3267-4ac1-a0cf-6aa7451877dc","object":"chat.completion.chunk","created":1771434740,"model":"openai/gpt-oss-120b","system_fingerprint":"fp_e8236260a9","choices":[{"index":0,"delta":{"reasoning":"We","channel":"analysis"},"logprobs":null,"finish_reason":null}]}',
    'data: {"id":"chatcmpl-4f39f3af-3267-4ac1-a0cf-6aa7451877dc","object":"chat.completion.chunk","created":1771434740,"model":"openai/gpt-oss-120b","system_fingerprint":"fp_e8236260a9","choices":[{"index":0,"delta":{"reasoning":".","channel":"analysis"},"logprobs":null,"finish_reason":null}]}',
    'event: error\ndata: {"error":{"message":"Tool call validation failed: tool call validation failed: parameters for tool get_something_by_name did not match schema: errors: [missing properties: \'name\', additionalProperties \'invalid_param\' not allowed]","type":"invalid_request_error","code":"tool_use_failed","failed_generation":"{\\"name\\": \\"get_something_by_name\\", \\"arguments\\": {\\n  \\"invalid_param\\": \\"value\\"\\n}}","status_code":400}}',
]

DEEPSEEK_TOOL_CALL = [
    'data: {"id":"f437f4d1-cf3a-4292-b255-ef88b01ca03f","object":"chat.completion.chunk","created":1748648834,"model":"deepseek-chat","system_fingerprint":"fp_8802369eaa_prod0425fp8","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}',
    'data: {"id":"f437f4d1-cf3a-4292-b255-ef88b01ca03f","object":"chat.completion.chunk","created":1748648834,"model":"deepseek-chat","system_fingerprint":"fp_8802369eaa_prod0425fp8","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_0_00213ae3-c4bc-4497-8f41-52bf4f76c3b9","type":"function","function":{"name":"read_file","arguments":""}}]},"logprobs":null,"finish_reason":null}]}',
    'data: {"id":"f437f4d1-cf3a-4292-b255-ef88b01ca03f","object":"chat.completion.chunk","created":1748648834,"model":"deepseek-chat","system_fingerprint":"fp_8802369eaa_prod0425fp8","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\\""}}]},"logprobs":null,"finish_reason":null}]}',
    'data: {"id":"f437f4d1-cf3a-4292-b255-ef88b01ca03f","object":"chat.completion.chunk","created":1748648834,"model":"deepseek-chat","system_fingerprint":"fp_8802369eaa_prod0425fp8","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"path"}}]},"logprobs":null,"finish_reason":null}]}',
    'data: {"id":"f437f4d1-cf3a-4292-b255-ef88b01ca03f","object":"chat.completion.chunk","created":1748648834,"model":"deepseek-chat","system_fingerprint":"fp_8802369eaa_prod0425fp8","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\\":"}}]},"logprobs":null,"finish_reason":null}]}',
    'data: {"id":"f437f4d1-cf3a-4292-b255-ef88b01ca03f","object":"chat.completion.chunk","created":1748648834,"model":"deepseek-chat","system_fingerprint":"fp_8802369eaa_prod0425fp8","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\\"."}}]},"logprobs":null,"finish_reason":null}]}',
    'data: {"id":"f437f4d1-cf3a-4292-b255-ef88b01ca03f","object":"chat.completion.chunk","created":1748648834,"model":"deepseek-chat","system_fingerprint":"fp_8802369eaa_prod0425fp8","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"/"}}]},"logprobs":null,"finish_reason":null}]}',
    'data: {"id":"f437f4d1-cf3a-4292-b255-ef88b01ca03f","object":"chat.completion.chunk","created":1748648834,"model":"deepseek-chat","system_fingerprint":"fp_8802369eaa_prod0425fp8","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"test"}}]},"logprobs":null,"finish_reason":null}]}',
    'data: {"id":"f437f4d1-cf3a-4292-b255-ef88b01ca03f","object":"chat.completion.chunk","created":1748648834,"model":"deepseek-chat","system_fingerprint":"fp_8802369eaa_prod0425fp8","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":".txt"}}]},"logprobs":null,"finish_reason":null}]}',
    'data: {"id":"f437f4d1-cf3a-4292-b255-ef88b01ca03f","object":"chat.completion.chunk","created":1748648834,"model":"deepseek-chat","system_fingerprint":"fp_8802369eaa_prod0425fp8","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\\"}"}}]},"logprobs":null,"finish_reason":null}]}',
    'data: {"id":"f437f4d1-cf3a-4292-b255-ef88b01ca03f","object":"chat.completion.chunk","created":1748648834,"model":"deepseek-chat","system_fingerprint":"fp_8802369eaa_prod0425fp8","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1716,"completion_tokens":21,"total_tokens":1737,"prompt_tokens_details":{"cached_tokens":0},"prompt_cache_hit_tokens":0,"prompt_cache_miss_tokens":1716}}',
    'data: [DONE]',
]

DEEPSEEK_REASONING = [
    'data: {"id":"33be18fc-3842-486c-8c29-dd8e578f7f20","object":"chat.completion.chunk","created":1752169304,"model":"deepseek-reasoner","system_fingerprint":"fp_393bca965e_prod0623_fp8_kvcache","choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":""},"logprobs":null,"finish_reason":null}],"usage":null}',
    'data: {"id":"33be18fc-3842-486c-8c29-dd8e578f7f20","object":"chat.completion.chunk","created":1752169304,"model":"deepseek-reasoner","system_fingerprint":"fp_393bca965e_prod0623_fp8_kvcache","choices":[{"index":0,"delta":{"content":null,"reasoning_content":"H"},"logprobs":null,"finish_reason":null}],"usage":null}',
    'data: {"id":"33be18fc-3842-486c-8c29-dd8e578f7f20","object":"chat.completion.chunk","created":1752169304,"model":"deepseek-reasoner","system_fingerprint":"fp_393bca965e_prod0623_fp8_kvcache","choices":[{"index":0,"delta":{"content":null,"reasoning_content":"mm"},"logprobs":null,"finish_reason":null}],"usage":null}',
    'data: {"id":"33be18fc-3842-486c-8c29-dd8e578f7f20","object":"chat.completion.chunk","created":1752169304,"model":"deepseek-reasoner","system_fingerprint":"fp_393bca965e_prod0623_fp8_kvcache","choices":[{"index":0,"delta":{"content":null,"reasoning_content":","},"logprobs":null,"finish_reason":null}],"usage":null}',
    'data: {"id":"33be18fc-3842-486c-8c29-dd8e578f7f20","object":"chat.completion.chunk","created":1752169304,"model":"deepseek-reasoner","system_fingerprint":"fp_393bca965e_prod0623_fp8_kvcache","choices":[{"index":0,"delta":{"content":null,"reasoning_content":" the"},"logprobs":null,"finish_reason":null}],"usage":null}',
    'data: {"id":"33be18fc-3842-486c-8c29-dd8e578f7f20","object":"chat.completion.chunk","created":1752169304,"model":"deepseek-reasoner","system_fingerprint":"fp_393bca965e_prod0623_fp8_kvcache","choices":[{"index":0,"delta":{"content":null,"reasoning_content":" user"},"logprobs":null,"finish_reason":null}],"usage":null}',
    'data: {"id":"33be18fc-3842-486c-8c29-dd8e578f7f20","object":"chat.completion.chunk","created":1752169304,"model":"deepseek-reasoner","system_fingerprint":"fp_393bca965e_prod0623_fp8_kvcache","choices":[{"index":0,"delta":{"content":"Hello","reasoning_content":null},"logprobs":null,"finish_reason":null}],"usage":null}',
    'data: {"id":"33be18fc-3842-486c-8c29-dd8e578f7f20","object":"chat.completion.chunk","created":1752169304,"model":"deepseek-reasoner","system_fingerprint":"fp_393bca965e_prod0623_fp8_kvcache","choices":[{"index":0,"delta":{"content":" there","reasoning_content":null},"logprobs":null,"finish_reason":null}],"usage":null}',
    'data: {"id":"33be18fc-3842-486c-8c29-dd8e578f7f20","object":"chat.completion.chunk","created":1752169304,"model":"deepseek-reasoner","system_fingerprint":"fp_393bca965e_prod0623_fp8_kvcache","choices":[{"index":0,"delta":{"content":"!","reasoning_content":null},"logprobs":null,"finish_reason":null}],"usage":null}',
    'data: {"id":"33be18fc-3842-486c-8c29-dd8e578f7f20","object":"chat.completion.chunk","created":1752169304,"model":"deepseek-reasoner","system_fingerprint":"fp_393bca965e_prod0623_fp8_kvcache","choices":[{"index":0,"delta":{"content":" 😊","reasoning_content":null},"logprobs":null,"finish_reason":null}],"usage":null}',
    'data: {"id":"33be18fc-3842-486c-8c29-dd8e578f7f20","object":"chat.completion.chunk","created":1752169304,"model":"deepseek-reasoner","system_fingerprint":"fp_393bca965e_prod0623_fp8_kvcache","choices":[{"index":0,"delta":{"content":"","reasoning_content":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":6,"completion_tokens":212,"total_tokens":218,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":198},"prompt_cache_hit_tokens":0,"prompt_cache_miss_tokens":6}}',
    'data: [DONE]',
]

MISTRAL_TOOL_CALL = [
    'data: {"id":"755aa30c9826400b818018ed9a0d4f62","object":"chat.completion.chunk","created":1748464326,"model":"mistral-large-latest","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}',
    'data: {"id":"755aa30c9826400b818018ed9a0d4f62","object":"chat.completion.chunk","created":1748464326,"model":"mistral-large-latest","choices":[{"index":0,"delta":{"tool_calls":[{"id":"4dI1Jw6NX","function":{"name":"llm_version","arguments":"{}"},"index":0}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":55,"total_tokens":73,"completion_tokens":18}}',
    'data: [DONE]',
]

MISTRAL_ANSWER = [
    'data: {"id":"394ba88c55a44d4593f7c5b57c2fa74f","object":"chat.completion.chunk","created":1748464330,"model":"mistral-large-latest","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}',
    'data: {"id":"394ba88c55a44d4593f7c5b57c2fa74f","object":"chat.completion.chunk","created":1748464330,"model":"mistral-large-latest","choices":[{"index":0,"delta":{"content":"The"},"finish_reason":null}]}',
    'data: {"id":"394ba88c55a44d4593f7c5b57c2fa74f","object":"chat.completion.chunk","created":1748464330,"model":"mistral-large-latest","choices":[{"index":0,"delta":{"content":" installed version of LL"},"finish_reason":null}]}',
    'data: {"id":"394ba88c55a44d4593f7c5b57c2fa74f","object":"chat.completion.chunk","created":1748464330,"model":"mistral-large-latest","choices":[{"index":0,"delta":{"content":"M is 0"},"finish_reason":null}]}',
    'data: {"id":"394ba88c55a44d4593f7c5b57c2fa74f","object":"chat.completion.chunk","created":1748464330,"model":"mistral-large-latest","choices":[{"index":0,"delta":{"content":".26."},"finish_reason":null}]}',
    'data: {"id":"394ba88c55a44d4593f7c5b57c2fa74f","object":"chat.completion.chunk","created":1748464330,"model":"mistral-large-latest","choices":[{"index":0,"delta":{"content":""},"finish_reason":"stop"}],"usage":{"prompt_tokens":105,"total_tokens":119,"completion_tokens":14}}',
    'data: [DONE]',
]

MISTRAL_SPLIT_ARGUMENTS = [
    'data: {"id":"tool-stream","model":"mistral-medium","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"lookup","arguments":"{\\"value\\":"}}]},"finish_reason":null}]}',
    'data: {"id":"tool-stream","model":"mistral-medium","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"","arguments":"42}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}',
    'data: [DONE]',
]

OPENROUTER_ERROR_CHUNK = [
    ': OPENROUTER PROCESSING',
    ': OPENROUTER PROCESSING',
    'data: {"id":"gen-1762179802-UN8pkJI4AGZvryk0kFnb","provider":"Minimax","model":"minimax/minimax-m2:free","object":"chat.completion.chunk","created":1762179802,"choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":"We need","reasoning_details":[{"type":"reasoning.text","text":"We need","index":0,"format":null}]},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}',
    'data: {"id":"gen-1762179802-UN8pkJI4AGZvryk0kFnb","provider":"Minimax","model":"minimax/minimax-m2:free","object":"chat.completion.chunk","created":1762179802,"choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":" to respond to a greeting. The user","reasoning_details":[{"type":"reasoning.text","text":" to respond to a greeting. The user","index":0,"format":null}]},"finish_reason":"length","native_finish_reason":"length","logprobs":null}]}',
    'data: {"id":"gen-1762179802-UN8pkJI4AGZvryk0kFnb","provider":"Minimax","model":"minimax/minimax-m2:free","object":"chat.completion.chunk","created":1762179802,"choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":null,"reasoning_details":[]},"finish_reason":"length","native_finish_reason":"length","logprobs":null}]}',
    'data: {"id":"gen-1762179802-UN8pkJI4AGZvryk0kFnb","provider":"Minimax","error":{"code":400,"message":"Token limit reached"},"model":"minimax/minimax-m2:free","object":"chat.completion.chunk","created":1762179802,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null,"native_finish_reason":null,"logprobs":null}],"usage":{"prompt_tokens":43,"completion_tokens":10,"total_tokens":53,"cost":0,"is_byok":false,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"cost_details":{"upstream_inference_cost":null,"upstream_inference_prompt_cost":0,"upstream_inference_completions_cost":0},"completion_tokens_details":{"reasoning_tokens":11,"image_tokens":0}}}',
    'data: [DONE]',
]

OPENROUTER_ENCRYPTED_REASONING = [
    ': OPENROUTER PROCESSING',
    ': OPENROUTER PROCESSING',
    'data: {"id":"gen-1762141316-q3fB64DDMstJO0ZakdSK","provider":"OpenAI","model":"openai/o3","object":"chat.completion.chunk","created":1762141317,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}',
    'data: {"id":"gen-1762141316-q3fB64DDMstJO0ZakdSK","provider":"OpenAI","model":"openai/o3","object":"chat.completion.chunk","created":1762141317,"choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":null,"reasoning_details":[{"type":"reasoning.encrypted","data":"gAAAAABpCCSIBxdevbk-8QtJuf4C6mgqDwXaUXZGqXqKQRX62aYMAYCg7DbFt3-A3KE_tihu5b36YJmI6393LEIF7lTmdXSxaHgROpGQA6sDVpJHPzcfWvTv774-JhpsbKSxisRYKsPkR5SSsJMULqCQShe_ypqQokHmOw8xHW_9g6-LXfRvv24bGjWMN_Cf994O4EQH4ZtgHwlVweADjseXYi9ShekxcuLRiEHpL4FKcvm5tFmylbSovKuZcu1HTTPMDVcRCgn9D3c56KcHYJGm-WJXuG9DmUO1q97Qj4pSBbSblCBK3qt0V6vbiXRfhmTaOU0gYNXWkmdWyr0UZFj2K5Kq5x9CLdYEdKFW4iMnjeEGIAMcuVvGtQOC406lF6_CnmC-ktPmWRspnoJeBhxGAeviaAyHC7tKO7cTFPOft_sVhWA8xJGy1vfz-cOQh3JcGSjm62MzfFjxh2G2jHixqqyVBopgckt1mDTlr0sU3m7COFWb4hiPNo6fmxiWxiT-umwYdfZngQ4yUkvZiTzZLqhJJzNu90Xl4BNRS_GDJVVrEKgy4kIT-PH1l2iCvf1AHOpefJR1MvIql8jlbrqY8Y7agIpR8XhnHeiCVE_oQg25Zg7x73f6g18rSt_DN3C05tzQCDCvvK4hAIIzxbBoiByErLJGCTOTOH8U_8UJLWSWpo13Cr2reXb7bbVVxtGUacQlTZi01Sz6WHMqKUmACTcNI9EUOwa8nytbSdqifXwkwc0Qpeegu6ibR8Z6P155c0KaKKi-c2iDmug4oTxcwJRWXbP5AUi-cWSC1Mhn9GW7SfqjQRqVdu4N9KcZ4IzLoEyuZtpJTHlCxzcpmQhBiVPxP8BOh8cnrbcn7ebVL2QfMejQS-9MZH_0vHLsbrx75fPHhp9Env9Vfhwx4awImdtIpN0IRYO-qwyp_RI2eGpaHpr8NV7YmkRDd5EwB0ylqO2kTEMPdGhpauQNae4-5CYa4C2_5fi6gU-6KLArCAO3MnvH_40RCGxoPlSxy_t5XX3NubMjy_paiuyTC_fIbkWAtdrd6HsZlDfv_6aZFxe_8C2IPaAuaLRvNSdTsLgzBXHfMPeaccV3c0-fYshNTOEkcvfC5b_v0wXh4sv0rU8rD2Fa3gBVt2QssutrbS0KIv6S4ySa","id":"rs_0aa4f2c435e6d1dc0169082486816c8193a029b5fc4ef1764f","format":"openai-responses-v1","index":0}]},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}',
    'data: {"id":"gen-1762141316-q3fB64DDMstJO0ZakdSK","provider":"OpenAI","model":"openai/o3","object":"chat.completion.chunk","created":1762141317,"choices":[{"index":0,"delta":{"role":"assistant","content":"I"},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}',
    'data: {"id":"gen-1762141316-q3fB64DDMstJO0ZakdSK","provider":"OpenAI","model":"openai/o3","object":"chat.completion.chunk","created":1762141317,"choices":[{"index":0,"delta":{"role":"assistant","content":"’m"},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}',
    'data: {"id":"gen-1762141316-q3fB64DDMstJO0ZakdSK","provider":"OpenAI","model":"openai/o3","object":"chat.completion.chunk","created":1762141317,"choices":[{"index":0,"delta":{"role":"assistant","content":" Chat"},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}',
    'data: {"id":"gen-1762141316-q3fB64DDMstJO0ZakdSK","provider":"OpenAI","model":"openai/o3","object":"chat.completion.chunk","created":1762141317,"choices":[{"index":0,"delta":{"role":"assistant","content":"GPT"},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}',
    'data: {"id":"gen-1762141316-q3fB64DDMstJO0ZakdSK","provider":"OpenAI","model":"openai/o3","object":"chat.completion.chunk","created":1762141317,"choices":[{"index":0,"delta":{"role":"assistant","content":","},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}',
    'data: {"id":"gen-1762141316-q3fB64DDMstJO0ZakdSK","provider":"OpenAI","model":"openai/o3","object":"chat.completion.chunk","created":1762141317,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop","native_finish_reason":"completed","logprobs":null}]}',
    'data: {"id":"gen-1762141316-q3fB64DDMstJO0ZakdSK","provider":"OpenAI","model":"openai/o3","object":"chat.completion.chunk","created":1762141317,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null,"native_finish_reason":null,"logprobs":null}],"usage":{"prompt_tokens":9,"completion_tokens":104,"total_tokens":113,"cost":0.00085,"is_byok":false,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"cost_details":{"upstream_inference_cost":null,"upstream_inference_prompt_cost":0.000018,"upstream_inference_completions_cost":0.000832},"completion_tokens_details":{"reasoning_tokens":0,"image_tokens":0}}}',
    'data: [DONE]',
]

# fmt: on


#: The bodies that assemble into a reply, by provider and what they show.
GOOD = {
    "openai-tool-call": OPENAI_TOOL_CALL,
    "openai-answer": OPENAI_ANSWER,
    "groq-tool-call": GROQ_TOOL_CALL,
    "deepseek-tool-call": DEEPSEEK_TOOL_CALL,
    "deepseek-reasoning": DEEPSEEK_REASONING,
    "mistral-tool-call": MISTRAL_TOOL_CALL,
    "mistral-answer": MISTRAL_ANSWER,
    "mistral-split-arguments": MISTRAL_SPLIT_ARGUMENTS,
}


def body(events: list[str]) -> bytes:
    """The event stream as sent: each event followed by a blank line."""
    return "".join(event + "\n\n" for event in events).encode("utf-8")
