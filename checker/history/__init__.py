"""Your progress: every check of your notebooks leaves its outcome in a small store (store.py), and
`python -m checker --progress` or `progress()` in a notebook lays it out (view.py)."""
