"""A teacher's gradebook: `python -m checker --grade DIR` checks every student's folder of notebooks
under DIR and writes a CSV and a JSON table, student by puzzle part.

roster.py finds the students and their notebooks (read only); cell.py turns one part's report into
a gradebook cell; book.py reads the last gradebook and writes the new one; run.py schedules the
checks, side by side, re-checking only the notebooks that changed.
"""
