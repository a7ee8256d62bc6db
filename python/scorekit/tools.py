"""String-in, value-out wrappers behind the ``scorekit`` commands (the reference kit's ``ek.tools``).

Each function takes what a command line gives (strings are converted) and returns a plain value or
dict; the command prints it as the reference kit's command does (a dict as its Python repr).

>>> pass_k(10, 9, k=8)
{'n': 10, 'c': 9, 'k': 8, 'pass_at_k': 1.0, 'pass_hat_k': 0.2}
>>> cost_per_success("12.50", "5", attempts="20")
{'total_dollars': 12.5, 'successes': 5, 'cost_per_success': 2.5, 'success_rate': 0.25}
"""

from __future__ import annotations

import math
from typing import Any, Optional

__all__ = ["pass_k", "cost_per_success"]


def _integer(value: Any, name: str) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a whole number, got {value!r}") from None


def _number(value: Any, name: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if math.isnan(number):
        raise ValueError(f"{name} must be a number, got {value!r}")
    return number


def pass_k(n: Any, c: Any, k: Any = 1) -> dict:
    """pass@k (capability) and pass^k (reliability) from ``c`` successes in ``n`` trials, rounded
    to 4 places. ``scorekit pass-k 10 9 --k 8``: a 90%-reliable agent judged over 8 trials."""
    from scorekit.agents.reliability import pass_at_k, pass_hat_k

    n, c, k = _integer(n, "n"), _integer(c, "c"), _integer(k, "k")
    return {"n": n, "c": c, "k": k, "pass_at_k": round(pass_at_k(n=n, c=c, k=k), 4),
            "pass_hat_k": round(pass_hat_k(n=n, c=c, k=k), 4)}


def cost_per_success(total_dollars: Any, successes: Any, *, attempts: Optional[Any] = None) -> dict:
    """Cost-of-Pass: ``total_dollars / successes`` (``inf`` without a success); with ``attempts``
    also the success rate, rounded to 4 places."""
    from scorekit.agents.cost import cost_of_pass

    total, wins = _number(total_dollars, "total_dollars"), _integer(successes, "successes")
    out = {"total_dollars": total, "successes": wins, "cost_per_success": cost_of_pass(total, wins)}
    if attempts:
        tries = _integer(attempts, "attempts")
        if tries <= 0:
            raise ValueError(f"attempts must be >= 1, got {tries}")
        out["success_rate"] = round(wins / tries, 4)
    return out
