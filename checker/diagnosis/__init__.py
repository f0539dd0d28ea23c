"""Hypotheses: from the evidence of a run to the hints a learner reads."""
