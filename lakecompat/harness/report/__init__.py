"""Reports rendered from a run's results alone: HTML, Markdown, JUnit, summary, diff."""
