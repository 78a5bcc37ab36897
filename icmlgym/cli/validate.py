"""Checking command-line input before any run starts: seeds, keyword arguments against the
constructor they go to, and names (env, suite, agent, entry) with close matches for typos.

Each check exits with status 2 and a one-line ``error: ...`` naming the argument (see
:func:`icmlgym.cli.common.fail`); nothing here runs an env or an agent.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
from typing import Any, Callable, Iterable, Optional, Sequence

from icmlgym.cli.common import fail


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """`` (did you mean a, b?)`` for close matches of ``name``, else an empty string."""
    close = difflib.get_close_matches(name, sorted(set(candidates)), n=3, cutoff=0.5)
    return f" (did you mean {', '.join(close)}?)" if close else ""


def seeds(count: Optional[int], seed_list: Optional[str], flag: str = "--seeds") -> list[int]:
    """The seeds of ``--seeds N`` (0..N-1) or ``--seed-list a,b,c`` (non-negative, no repeats)."""
    if seed_list is not None:
        out: list[int] = []
        for part in seed_list.split(","):
            part = part.strip()
            try:
                s = int(part)
            except ValueError:
                fail(f"--seed-list takes comma-separated non-negative integers, got {part!r} in {seed_list!r}")
            if s < 0:
                fail(f"--seed-list: seeds must be non-negative, got {s}")
            if s in out:
                fail(f"--seed-list repeats seed {s}: each seed is one sample")
            out.append(s)
        if not out:
            fail("--seed-list names no seed")
        return out
    if count is None or count < 1:
        fail(f"{flag} must be at least 1, got {count}")
    return list(range(count))


def positive(value: Optional[float], flag: str, allow_none: bool = True) -> None:
    """Exit unless ``value`` is positive (or None when allowed)."""
    if value is None and allow_none:
        return
    if value is None or value <= 0:
        fail(f"{flag} must be positive, got {value}")


_SIMPLE = {"int": "an integer", "float": "a number", "str": "a string", "bool": "true or false", "None": "null"}


def _fits(value: Any, name: str) -> bool:
    if name == "None":
        return value is None
    if name == "bool":
        return isinstance(value, bool)
    if name == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "float":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, str)


def _type_ok(value: Any, default: Any, annotation: Any) -> tuple[bool, str]:
    """Whether ``value`` fits a parameter with this annotation (or, without one, its default's
    type), and what was expected in words. Annotations other than unions of int, float, str, bool
    and None accept anything (the constructor checks those itself)."""
    if annotation is inspect.Parameter.empty:
        if default is inspect.Parameter.empty or default is None:
            return True, ""
        names = [type(default).__name__]
    else:
        text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))
        names = [t.strip() for t in text.replace("Optional[", "").rstrip("]").split("|")]
        if default is None and "None" not in names:
            names.append("None")
    if not all(n in _SIMPLE for n in names):
        return True, ""
    ok = any(_fits(value, n) for n in names)
    return ok, " or ".join(_SIMPLE[n] for n in names)


def kwargs_for(target: Callable[..., Any], given: dict[str, Any], flag: str, what: str) -> None:
    """Check ``key=value`` pairs against ``target``'s signature: unknown names (unless it takes
    ``**kwargs``) and values whose type does not match the parameter's default."""
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return
    params = {n: p for n, p in sig.parameters.items() if n != "self"}
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    named = [n for n, p in params.items() if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)]
    for key, value in given.items():
        if key not in params or params[key].kind not in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY):
            if takes_any:
                continue
            fail(f"{flag} {key}={value!r}: {what} takes no argument {key!r}{did_you_mean(key, named)}; it takes {', '.join(named) or 'none'}")
        p = params[key]
        ok, expected = _type_ok(value, p.default, p.annotation)
        if not ok:
            default = "" if p.default is inspect.Parameter.empty else f" (default {p.default!r})"
            fail(f"{flag} {key}={value!r}: {key} of {what} takes {expected}{default}")


def env_kwargs(card: Any, given: dict[str, Any], flag: str = "--env-kwarg") -> None:
    """Check env kwargs against the env class's constructor (imports its module, makes nothing)."""
    if not given:
        return
    module, _, attr = card.entry_point.partition(":")
    try:
        obj: Any = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except Exception:  # a missing extra is reported when the env is made
        return
    kwargs_for(obj, given, flag, f"env {card.id}")


def agent_kwargs(loaded: Any, given: dict[str, Any], flag: str = "--agent-kwarg") -> None:
    """Check agent kwargs against the loaded agent class's constructor."""
    if given and callable(getattr(loaded, "cls", None)):
        kwargs_for(loaded.cls, given, flag, f"agent {loaded.name}")


def names(given: Optional[Sequence[str]], known: Iterable[str], flag: str, kind: str) -> None:
    """Exit if any of ``given`` is not in ``known``, with close matches."""
    known = sorted(set(known))
    for name in given or []:
        if name not in known:
            fail(f"{flag}: no {kind} {name!r}{did_you_mean(name, known)}")


__all__ = ["agent_kwargs", "did_you_mean", "env_kwargs", "kwargs_for", "names", "positive", "seeds"]
