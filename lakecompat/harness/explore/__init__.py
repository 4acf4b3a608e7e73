"""Generated evolution sequences, each failure shrunk to the smallest."""
