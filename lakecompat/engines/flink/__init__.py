"""Flink: a local cluster with Hudi's Flink bundle, and the reader (Flink SQL)."""
