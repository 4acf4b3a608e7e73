"""Cells and their outcomes, the results file, and known outcomes (validation, judging and
drafting)."""
