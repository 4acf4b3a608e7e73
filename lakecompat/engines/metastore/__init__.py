"""The Hive Metastore: the service, and how a table is registered in it (thrift and DDL)."""
