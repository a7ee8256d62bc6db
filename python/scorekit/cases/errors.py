"""The errors of :mod:`scorekit.cases`: configuration problems (collected, raised together before
anything runs) and a comparator that failed while a case was scored."""

from __future__ import annotations

from typing import Iterable

from scorekit.errors import ScorekitError

__all__ = ["CasesConfigError", "ComparatorConfigError", "ComparatorError"]


class CasesConfigError(ScorekitError, ValueError):
    """Every configuration problem found (bad case files, ``$file`` references, comparators,
    thresholds, pipelines), one line each in ``problems``; raised before any pipeline runs."""

    def __init__(self, problems: Iterable[str]) -> None:
        self.problems = list(problems)
        count = len(self.problems)
        head = "1 configuration problem" if count == 1 else f"{count} configuration problems"
        super().__init__(head + ":\n" + "\n".join(f"  - {p}" for p in self.problems))


class ComparatorConfigError(CasesConfigError):
    """The only configuration problems are in the comparators: an unknown name or option, a path
    pattern that matches no expected value, two comparators for one field, one never used."""


class ComparatorError(ScorekitError, RuntimeError):
    """A comparator raised, or returned something that is not a finite real number; the case it
    was scoring is marked ``error`` with this message (the run goes on)."""
