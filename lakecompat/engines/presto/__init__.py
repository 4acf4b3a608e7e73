"""Presto: the server's provisioning, its statement protocol and the reader (its Hudi and Hive
connectors)."""
