"""Maintenance policies as data: when a registered corpus is rebuilt.

A policy is stored in the corpus's registry entry (``"maintenance"``) and
read back by :func:`policy_from_spec`; :mod:`rowvoi.corpus.maintenance.runs`
acts on it. This module knows nothing of the registry file or of runs, so
the registry checks a policy without importing the runs that use it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "POLICIES",
    "DEFAULT_INTERVAL",
    "MaintenancePolicy",
    "parse_duration",
    "format_duration",
    "policy_from_spec",
    "default_policy",
]

#: The policy kinds.
#: The policy kinds.
POLICIES = ("on_source_change", "interval", "manual")
#: The interval of fetcher corpora with no policy of their own, in seconds.
DEFAULT_INTERVAL = 24 * 3600.0
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_ALIASES = {
    "on_source_change": "on_source_change",
    "source-change": "on_source_change",
    "source_change": "on_source_change",
    "on-source-change": "on_source_change",
    "interval": "interval",
    "manual": "manual",
}


def parse_duration(text: str | float | int) -> float:
    """Seconds in a duration: a number of seconds, or units ``s m h d w``
    in sequence (``"90s"``, ``"15m"``, ``"1h30m"``, ``"7d"``).

    Raises
    ------
    ValueError
        Not a duration, or not > 0; the message shows the form.

    Examples
    --------
    >>> parse_duration("1h30m"), parse_duration("2d"), parse_duration(60)
    (5400.0, 172800.0, 60.0)
    >>> parse_duration("soon")
    Traceback (most recent call last):
    ...
    ValueError: duration 'soon': use a number with a unit s, m, h, d or w, e.g. 30m, 6h, 1d12h
    """
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        seconds = float(text)
    elif isinstance(text, str) and re.fullmatch(r"(\s*\d+(\.\d+)?\s*[smhdw])+\s*", text):
        seconds = sum(
            float(n) * _UNITS[u] for n, _, u in re.findall(r"(\d+(\.\d+)?)\s*([smhdw])", text)
        )
    else:
        raise ValueError(
            f"duration {text!r}: use a number with a unit s, m, h, d or w, e.g. 30m, 6h, 1d12h"
        )
    if not math.isfinite(seconds) or seconds <= 0:
        raise ValueError(f"duration {text!r}: must be > 0")
    return seconds


def format_duration(seconds: float) -> str:
    """A duration as the largest units that fit (the inverse of
    :func:`parse_duration` for whole seconds).

    >>> format_duration(5400), format_duration(86400), format_duration(0.4)
    ('1h30m', '1d', '0s')
    """
    s = round(seconds)
    out = []
    for unit in ("w", "d", "h", "m", "s"):
        n, s = divmod(s, _UNITS[unit])
        if n:
            out.append(f"{n}{unit}")
    return "".join(out) or "0s"


@dataclass(frozen=True)
class MaintenancePolicy:
    """When :func:`~rowvoi.corpus.maintenance.runs.maintain` rebuilds a corpus.

    Attributes
    ----------
    on : {"on_source_change", "interval", "manual"}
    every : float or None
        Seconds between rebuilds, for ``interval`` (and only for it).

    Examples
    --------
    >>> MaintenancePolicy("interval", 3600).to_spec()
    'interval:1h'
    >>> MaintenancePolicy("manual", 5)
    Traceback (most recent call last):
    ...
    ValueError: policy 'manual' takes no duration (only interval does)
    """

    on: str = "on_source_change"
    every: float | None = None

    def __post_init__(self) -> None:
        if self.on not in POLICIES:
            raise ValueError(
                f"policy {self.on!r}: use one of {', '.join(POLICIES)} "
                "(interval with a duration: interval:24h)"
            )
        if self.on == "interval":
            if self.every is None:
                raise ValueError("policy 'interval' needs a duration: interval:24h")
            object.__setattr__(self, "every", parse_duration(self.every))
        elif self.every is not None:
            raise ValueError(f"policy {self.on!r} takes no duration (only interval does)")

    def to_spec(self) -> str:
        """The policy as a string (``"manual"``, ``"interval:6h"``)."""
        return self.on if self.every is None else f"{self.on}:{format_duration(self.every)}"

    def to_dict(self) -> dict[str, Any]:
        """The policy as stored in the registry.

        >>> MaintenancePolicy("interval", "6h").to_dict()
        {'on': 'interval', 'every_seconds': 21600.0}
        """
        out: dict[str, Any] = {"on": self.on}
        if self.every is not None:
            out["every_seconds"] = self.every
        return out


def policy_from_spec(spec: Any) -> MaintenancePolicy:
    """A :class:`MaintenancePolicy` from a string (``"on_source_change"``,
    ``"manual"``, ``"interval:6h"``), a stored dict (``{"on": "interval",
    "every_seconds": 21600}``) or a policy.

    Raises
    ------
    ValueError
        An unknown kind, a missing or malformed duration, unknown keys.

    Examples
    --------
    >>> policy_from_spec("interval:1d").every
    86400.0
    >>> policy_from_spec("weekly")
    Traceback (most recent call last):
    ...
    ValueError: policy 'weekly': use on_source_change, manual or interval:DURATION (e.g. interval:24h)
    """
    if isinstance(spec, MaintenancePolicy):
        return spec
    if isinstance(spec, str):
        kind, sep, every = spec.strip().partition(":")
        on = _ALIASES.get(kind.strip().lower())
        if on is None:
            raise ValueError(
                f"policy {spec!r}: use on_source_change, manual or "
                "interval:DURATION (e.g. interval:24h)"
            )
        if not sep:
            return MaintenancePolicy(on)
        if on != "interval":
            raise ValueError(f"policy {on!r} takes no duration (only interval does)")
        return MaintenancePolicy(on, parse_duration(every.strip()))
    if isinstance(spec, Mapping):
        unknown = set(spec) - {"on", "every_seconds"}
        if unknown or not isinstance(spec.get("on"), str):
            raise ValueError(
                f"policy {dict(spec)!r}: expected {{'on': KIND}} with 'every_seconds' for interval"
            )
        on_name = str(spec["on"])
        return MaintenancePolicy(_ALIASES.get(on_name, on_name), spec.get("every_seconds"))
    raise TypeError(
        f"a maintenance policy is a string such as 'interval:24h', not {type(spec).__name__}"
    )


def default_policy(entry: Mapping[str, Any]) -> MaintenancePolicy:
    """The policy of an entry without one: ``on_source_change`` for files,
    records files and tool catalogue files, ``interval`` every
    :data:`DEFAULT_INTERVAL` for a fetcher (whose only change signal is
    calling it).

    >>> default_policy({"kind": "records", "fetcher": "m:f"}).to_spec()
    'interval:1d'
    """
    if entry.get("fetcher"):  # records or an MCP tool catalogue
        return MaintenancePolicy("interval", DEFAULT_INTERVAL)
    return MaintenancePolicy("on_source_change")
