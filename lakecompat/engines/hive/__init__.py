"""Hive: HiveServer2 as a reader, on the run's Metastore."""
