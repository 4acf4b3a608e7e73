"""The Delta Lake writer (`writer.py`), its SQL (`statements.py`), its log (`files.py`) and
its reproduction script (`script.py`)."""
