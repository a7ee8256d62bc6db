"""String-in, value-out functions behind the ``scorekit`` commands (the reference kit's ``ek.tools``).

Each function takes what a command line gives (strings are converted) and returns a plain value or
dict; the command of the same name (underscores as hyphens) prints it as the reference kit's
command does: a number or string as ``print`` shows it, a dict as its Python repr.

>>> cer("hello wrld", "hello world")
0.09090909090909091
>>> rover("the cat sat", "the cat sit", "the bat sat")
{'consensus': 'the cat sat', 'mean_agreement': 0.7778, 'agreement': [1.0, 0.6667, 0.6667], 'n_engines': 3}
>>> pass_k(10, 9, k=8)
{'n': 10, 'c': 9, 'k': 8, 'pass_at_k': 1.0, 'pass_hat_k': 0.2}
>>> cost_per_success("12.50", "5", attempts="20")
{'total_dollars': 12.5, 'successes': 5, 'cost_per_success': 2.5, 'success_rate': 0.25}
"""

from __future__ import annotations

import functools
import importlib
import math
import numbers
from typing import Any, Optional

from scorekit.errors import InvalidTypeError, InvalidValueError, describe

__all__ = ["cer", "wer", "rover", "pass_k", "cost_per_success", "where", "where_note", "check", "engines",
           "version"]

#: Shown by :func:`engines` when the OCR extra (ocracy) is not installed.
NO_OCR_ENGINES = "(install scorekit[ocr] to list OCR backends)"


def cer(prediction: str, gold: str, *, normalize: Optional[Any] = None) -> float:
    """Character Error Rate between a prediction and a gold string (lower is better); ``normalize``
    is a normalizer name (or list of names) as :func:`scorekit.score` takes."""
    from scorekit.facade import score

    return score(prediction, gold, metric="cer", normalize=normalize).value


def wer(prediction: str, gold: str, *, normalize: Optional[Any] = None) -> float:
    """Word Error Rate between a prediction and a gold string (lower is better).

    >>> wer("hello wrld", "hello world")
    0.5
    """
    from scorekit.facade import score

    return score(prediction, gold, metric="wer", normalize=normalize).value


def rover(*hypotheses: str, confidence: bool = True) -> dict:
    """ROVER consensus of 2+ transcriptions with the agreement of each position and their mean,
    rounded to 4 places (reference-free)."""
    from scorekit._packing import pack_texts
    from scorekit.qe.rover import rover_command

    if [h for h in hypotheses if type(h) is not str or not h.isascii()]:  # ASCII text has no lone surrogate
        pack_texts(hypotheses, "hypotheses")  # a non-str or a lone surrogate is an error, as for cer/wer
    return rover_command(list(hypotheses), confidence)


def _integer(value: Any, name: str) -> int:
    """A whole number from a command line's string or a Python number: ``"12"``, ``12`` and
    ``12.0`` are 12; ``10.9``, ``"10.9"``, NaN and ``True`` are errors, never truncated."""
    if type(value) is int:  # the common case, before the ABC checks
        return value
    if isinstance(value, bool):
        raise InvalidTypeError(f"must be a whole number, got {describe(value)}", field=name)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real) and math.isfinite(value) and float(value).is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            pass
    elif not isinstance(value, numbers.Real):
        raise InvalidTypeError(f"must be a whole number, got {describe(value)}", field=name)
    raise InvalidValueError(f"must be a whole number, got {describe(value)}", field=name)


def _count(value: Any, name: str, minimum: int = 0) -> int:
    number = _integer(value, name)
    if number < minimum:
        raise InvalidValueError(f"must be >= {minimum}, got {number}", field=name)
    return number


def _dollars(value: Any, name: str) -> float:
    try:
        number = float(value)
    except OverflowError:  # an integer beyond the float range
        raise InvalidValueError(f"must be finite and >= 0, got {describe(value)}", field=name) from None
    except (TypeError, ValueError):
        raise InvalidValueError(f"must be a number, got {value!r}", field=name) from None
    if not (math.isfinite(number) and number >= 0):
        raise InvalidValueError(f"must be finite and >= 0, got {value!r}", field=name)
    return number


@functools.cache
def _agents(module: str) -> Any:
    """``scorekit.agents.<module>``, imported on first use (it loads the agents package) and kept:
    an ``import`` statement in the function would cost more than its arithmetic on every call."""
    return importlib.import_module(f"scorekit.agents.{module}")


def pass_k(n: Any, c: Any, k: Any = 1) -> dict:
    """pass@k (capability) and pass^k (reliability) from ``c`` successes in ``n`` trials, rounded
    to 4 places. ``scorekit pass-k 10 9 --k 8``: a 90%-reliable agent judged over 8 trials.
    ``n``, ``c`` and ``k`` are whole numbers (``10.9`` is an error, not 10)."""
    reliability = _agents("reliability")
    n, c, k = _integer(n, "n"), _integer(c, "c"), _integer(k, "k")
    return {"n": n, "c": c, "k": k, "pass_at_k": round(reliability.pass_at_k(n=n, c=c, k=k), 4),
            "pass_hat_k": round(reliability.pass_hat_k(n=n, c=c, k=k), 4)}


def cost_per_success(total_dollars: Any, successes: Any, *, attempts: Optional[Any] = None) -> dict:
    """Cost-of-Pass: ``total_dollars / successes`` (``inf`` without a success); with ``attempts``
    also the success rate, rounded to 4 places. Dollars are finite and ``>= 0``, successes a whole
    number ``>= 0``, attempts a whole number ``>= 1`` and ``>= successes``."""
    total, wins = _dollars(total_dollars, "total_dollars"), _count(successes, "successes")
    out = {"total_dollars": total, "successes": wins, "cost_per_success": _agents("cost").cost_of_pass(total, wins)}
    if attempts is not None:
        tries = _count(attempts, "attempts", minimum=1)
        if wins > tries:
            raise InvalidValueError(f"successes ({wins}) cannot exceed attempts ({tries})")
        out["success_rate"] = round(wins / tries, 4)
    return out


def where() -> str:
    """The local data folder where scorekit keeps gold sets, results, runs, baselines and
    calibrators (``$SCOREKIT_DATA_HOME``, else ``$EK_DATA_HOME``, else the user's data folder:
    scorekit's, or the reference kit's while scorekit's does not exist)."""
    from scorekit.stores import data_root

    return str(data_root())


def where_note() -> Optional[str]:
    """What ``scorekit where`` adds on stderr when the folder is the reference kit's, else None."""
    from scorekit.stores import data_root, kit_folder, scorekit_folder

    if data_root() != kit_folder() or scorekit_folder().exists():
        return None
    return (f"scorekit's data folder {scorekit_folder()} does not exist, so the reference kit's folder is used; "
            f"create {scorekit_folder()} to keep scorekit's data apart")


def check(engine: str) -> dict:
    """What an OCR engine needs to run (asks ocracy when it is installed); never raises.

    >>> check("tesseract")["engine"]
    'tesseract'
    """
    from scorekit.registry import check_requirements

    return check_requirements(engine=engine)


def engines() -> list:
    """The installed OCR backends (ocracy's, the ``ocr`` extra); without it, one line saying so."""
    try:
        ocracy = importlib.import_module("ocracy")
    except ImportError:
        return [NO_OCR_ENGINES]
    return list(ocracy.available_backends())


def version() -> str:
    """The installed scorekit version."""
    import scorekit

    return scorekit.__version__

