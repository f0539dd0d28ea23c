"""Facts a run leaves (comparisons, guard bands): numbers, no learner prose."""
