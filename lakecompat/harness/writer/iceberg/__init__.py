"""The Iceberg writer: PySpark with Iceberg's Spark runtime, in a process of its own."""
