"""Instruments on Triton's interpreter: the front-end compile, bf16, the sanitizer, the lock protocol."""
