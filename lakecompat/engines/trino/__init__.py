"""Trino: the server's provisioning and the reader (its Hudi and Hive connectors)."""
