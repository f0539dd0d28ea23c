"""The second blind corpus of p27–p32: learner bugs and correct rewrites written from the solutions,
the pages and the notebooks alone, by someone who had read no hint code, after the hints were tuned
on the first blind corpus and on the mutants; scored untouched before it joined tests/bugs/pNN.py's
MEASURED and RIGHT (each of those files adds its puzzle's entries from here)."""
