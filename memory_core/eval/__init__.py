"""Evaluation harness: LoCoMo retrieval metrics, gate calibration and the scenario suite.

Everything here judges the system from what it logged (search_log, write_log, records); see
docs/evaluation.md. Benchmarks in benchmarks/ and the scenario tests import these modules.
"""
