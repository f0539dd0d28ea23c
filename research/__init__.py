"""The studies behind the book's measured pages (research/README.md): scripts run on a GPU, whose
results the book reads from book/data/. `research.runs` is what they share."""
