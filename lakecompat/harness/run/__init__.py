"""One run: options, plan, folder, the engines' fleet, the read loop of a cell, and the
scheduler."""
