"""Stored text as every surface shows it: one line of quoted data that cannot pose as
instructions, and fences neutralised (the rules: :mod:`bigmind.memory.quoting`)."""

from __future__ import annotations

from bigmind.memory.quoting import cell, neutral_fences, quoted

__all__ = ["cell", "neutral_fences", "quoted"]
