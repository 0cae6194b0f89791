"""What every executor returns: JSON-ready records, and how far the limit cut.

>>> r = QueryResult(columns=("count",), records=[{"count": 3}], limit=1000,
...                 requested_limit=None, clamped=False, truncated=False,
...                 engine="pandas", scalar=True)
>>> r.value, r.to_dict()["value"]
(3, 3)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rowvoi.query.validate import ValidQuery
from rowvoi.query.values import json_value

__all__ = ["QueryResult", "build_result"]


@dataclass(frozen=True)
class QueryResult:
    """The answer to a query.

    Attributes
    ----------
    columns : tuple of str
        Output column names, in order.
    records : list of dict
        One dict per row, values JSON-ready: ``int``, ``float``, ``str``
        (dates as ISO-8601) or ``None`` for missing -- never numpy scalars
        or NaN. ``json.dumps(result.to_dict())`` always works.
    limit : int
        The limit applied (after clamping to the schema's ``max_limit``).
    requested_limit : int or None
        The limit the query asked for.
    clamped : bool
        True if the requested limit was above ``max_limit`` and was cut.
    truncated : bool
        True if more rows matched than ``limit``.
    engine : str
        ``"pandas"``, ``"duckdb"`` or ``"sqlite"``.
    scalar : bool
        True for an ungrouped aggregate (always exactly one record).
    """

    columns: tuple[str, ...]
    records: list[dict[str, Any]]
    limit: int
    requested_limit: int | None
    clamped: bool
    truncated: bool
    engine: str
    scalar: bool = False

    @property
    def value(self) -> Any:
        """The single value of an ungrouped aggregate with one aggregation.

        Raises
        ------
        ValueError
            For any other result (use ``records``).
        """
        if not self.scalar or len(self.columns) != 1:
            raise ValueError(
                "value is defined for an ungrouped query with one aggregation; "
                "read records instead"
            )
        return self.records[0][self.columns[0]]

    def to_dict(self) -> dict[str, Any]:
        """The result as a JSON-ready object (``value`` added for scalars)."""
        out: dict[str, Any] = {
            "columns": list(self.columns),
            "records": self.records,
            "limit": self.limit,
            "requested_limit": self.requested_limit,
            "clamped": self.clamped,
            "truncated": self.truncated,
            "engine": self.engine,
        }
        if self.scalar and len(self.columns) == 1:
            out["value"] = self.value
        return out


def build_result(vq: ValidQuery, rows: Iterable[Sequence[Any]], engine: str) -> QueryResult:
    """Turn an executor's raw rows into a :class:`QueryResult`.

    ``rows`` may hold one row past ``vq.limit`` (executors fetch ``limit + 1``
    to learn whether the result was cut); it is dropped and reported as
    ``truncated``.
    """
    kinds = [(o.name, o.kind) for o in vq.outputs]
    records: list[dict[str, Any]] = []
    truncated = False
    for row in rows:
        if len(records) == vq.limit:
            truncated = True
            break
        records.append({name: json_value(v, kind) for (name, kind), v in zip(kinds, row)})
    return QueryResult(
        columns=tuple(n for n, _ in kinds),
        records=records,
        limit=vq.limit,
        requested_limit=vq.requested_limit,
        clamped=vq.clamped,
        truncated=truncated,
        engine=engine,
        scalar=vq.is_scalar,
    )
