"""Spark: the runtime (PySpark with a Hudi bundle), a child process for another Hudi release, and
the reader.
"""
