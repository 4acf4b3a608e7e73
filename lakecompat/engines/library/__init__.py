"""Readers that are Python libraries (hudi-rs, Daft), each in an environment of its own and read in
a worker process.
"""
