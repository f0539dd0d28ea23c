"""What --bench does: columns timed side by side, and each kernel's time from the profiler."""
