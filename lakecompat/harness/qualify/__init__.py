"""Release qualification: version points, runs at each point, and the comparison of their cells."""
