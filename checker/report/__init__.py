"""The report of a check: text for the terminal, HTML for a notebook, plots."""
