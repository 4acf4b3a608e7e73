"""Scenarios: the model, loading and validation, types, the oracle, and the comparison of an answer
with it.
"""
