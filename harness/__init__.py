"""The engine-independent core of lakecompat."""
