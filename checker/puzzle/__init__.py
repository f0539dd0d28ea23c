"""What a puzzle is: its model, and the vocabulary a spec declares it with."""
