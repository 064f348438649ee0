"""Results: the results.json format (pydantic models, schema, load and check), building it from
episodes (build), and metrics (pass@k, pass^k).
"""
