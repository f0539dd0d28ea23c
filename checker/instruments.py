"""The one door from a spec's launch helpers to the instrument that guards the launch.

`scratch()` and `shared()` (checker/puzzle/) run inside a spec's launch and must tell the
interpreter's sanitizer about the buffers they make, without importing it: the sanitizer sits
layers above the puzzle model, and on a GPU it is not loaded at all. So the sanitizer installs
itself here while it guards this process's launches (`install`) and takes itself out when it stops;
a helper asks `active()`. What the sanitizer then sees travels back in what the launch returns,
never through this module.
"""
from __future__ import annotations

from typing import Any, Protocol


class Instrument(Protocol):
    def watch_scratch(self, tensor: Any, int_type: Any, bits: int) -> None:
        """A scratch buffer filled with the poison: a read of an element no kernel wrote is evidence."""

    def expect_shared(self, tensors: list[Any]) -> None:
        """Buffers several programs add into on purpose: a race there asks for atomics or locks."""

    def shared_tensors(self) -> list[Any]:
        """The buffers declared shared so far."""


_active: Instrument | None = None


def install(instrument: Instrument | None) -> None:
    """The instrument that guards launches from now on (None: none does)."""
    global _active
    _active = instrument


def active() -> Instrument | None:
    return _active
