"""A failing cell as a standalone reproduction and an upstream issue draft."""
