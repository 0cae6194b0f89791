"""The allow-list: which columns a query may name, and what it may do with them.

A :class:`QuerySchema` is the only source of identifiers the executors ever
use: a query naming anything else is refused before anything runs. Each
column has a type (``numeric``, ``categorical``, ``text``, ``date``), the
filter operators and aggregations allowed on it (defaults per type), and,
for categorical columns, the canonical values that filter values are folded
onto (the seed's ``CATEGORICAL_MAPPING``): case, spaces, hyphens and
underscores are ignored, so ``non profit`` and ``NON_PROFIT`` both mean
``Non-Profit``.

>>> import pandas as pd
>>> df = pd.DataFrame({"sector": ["Non-Profit", "Corporate"] * 3,
...                    "income": [10.0, 20.0, 30.0, 40.0, 50.0, 60.0]})
>>> schema = QuerySchema.from_frame(df)
>>> schema["sector"].type, schema["sector"].normalize("non profit")
('categorical', 'Non-Profit')
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rowvoi.errors import QueryError
from rowvoi.query.model import (
    AGGREGATIONS,
    COLUMN_TYPES,
    MAX_QUERY_LIMIT,
    OPERATORS,
    describe_value,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "DEFAULT_AGGREGATIONS",
    "DEFAULT_OPERATORS",
    "RESERVED_PREFIX",
    "ColumnSpec",
    "QuerySchema",
    "fold_category",
]

_ORDERED = ("$eq", "$ne", "$in", "$nin", "$lt", "$lte", "$gt", "$gte", "$exists")
#: Filter operators allowed per column type unless a column says otherwise.
DEFAULT_OPERATORS: Mapping[str, tuple[str, ...]] = {
    "numeric": _ORDERED,
    "date": _ORDERED,
    "categorical": ("$eq", "$ne", "$in", "$nin", "$exists"),
    "text": _ORDERED + ("$contains",),
}
#: Aggregations allowed per column type unless a column says otherwise.
DEFAULT_AGGREGATIONS: Mapping[str, tuple[str, ...]] = {
    "numeric": AGGREGATIONS,
    "date": ("count", "min", "max"),
    "categorical": ("count", "min", "max"),
    "text": ("count", "min", "max"),
}
#: Column names starting with this are reserved for the executors' own use.
RESERVED_PREFIX = "__rowvoi"
_COLUMN_OPERATORS = tuple(op for op in OPERATORS if op not in ("$and", "$or"))
_FOLD_DROP = str.maketrans("", "", " \t\r\n-_")
_SPEC_KEYS = ("type", "integer", "operators", "aggregations", "values", "aliases")


def fold_category(text: str) -> str:
    """The key categorical values are matched on: case-folded, without
    spaces, hyphens or underscores.

    >>> fold_category("Non-Profit") == fold_category(" non_profit ") == "nonprofit"
    True
    """
    return text.casefold().translate(_FOLD_DROP)


def _listing(values: Sequence[str], most: int = 20) -> str:
    shown = ", ".join(repr(v) for v in values[:most])
    return shown + (f", ... ({len(values)} values)" if len(values) > most else "")


@dataclass(frozen=True)
class ColumnSpec:
    """One allowed column.

    Parameters
    ----------
    name : str
        The column's name in the table.
    type : {"numeric", "categorical", "text", "date"}
        Decides the values filters may compare it with and the kind of
        output values.
    integer : bool, default False
        For ``numeric``: values, ``sum``, ``min`` and ``max`` come out as
        ``int`` (``mean`` is always a float).
    operators : sequence of str, optional
        Filter operators allowed on the column (default
        :data:`DEFAULT_OPERATORS` of its type).
    aggregations : sequence of str, optional
        Aggregations allowed on it (default :data:`DEFAULT_AGGREGATIONS`).
    values : sequence of str, optional
        For ``categorical``: the canonical values. A filter value is matched
        exactly, then through ``aliases``, then on :func:`fold_category`;
        a value that matches none (or two) is refused. ``None`` accepts any
        string unchanged.
    aliases : mapping of str to str, optional
        Extra spellings of canonical values, e.g. ``{"NGO": "Non-Profit"}``.

    Raises
    ------
    QueryError
        For an unknown type, operator or aggregation, a reserved or empty
        name, or aliases that point outside ``values``.
    """

    name: str
    type: str
    integer: bool = False
    operators: tuple[str, ...] | None = None
    aggregations: tuple[str, ...] | None = None
    values: tuple[str, ...] | None = None
    aliases: tuple[tuple[str, str], ...] = ()
    _folded: Mapping[str, tuple[str, ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        problems: list[str] = []
        where = f"schema column {describe_value(self.name)}"
        if not isinstance(self.name, str) or not self.name or "\x00" in self.name:
            problems.append(f"{where}: a column name must be a non-empty string")
        elif self.name.startswith(RESERVED_PREFIX):
            problems.append(f"{where}: names starting with {RESERVED_PREFIX!r} are reserved")
        if self.type not in COLUMN_TYPES:
            problems.append(
                f"{where}: type must be one of {', '.join(COLUMN_TYPES)}, got "
                f"{describe_value(self.type)}"
            )
            raise QueryError(problems)
        set_ = object.__setattr__
        set_(self, "integer", bool(self.integer) and self.type == "numeric")
        set_(
            self,
            "operators",
            self._allowed(
                "operators", self.operators, _COLUMN_OPERATORS, DEFAULT_OPERATORS, problems
            ),
        )
        set_(
            self,
            "aggregations",
            self._allowed(
                "aggregations", self.aggregations, AGGREGATIONS, DEFAULT_AGGREGATIONS, problems
            ),
        )
        aliases = self.aliases
        if isinstance(aliases, Mapping):
            aliases = tuple(aliases.items())
        if self.type != "categorical" and (self.values is not None or aliases):
            problems.append(f"{where}: values and aliases apply to categorical columns only")
        if self.values is not None:
            values = self.values
            if isinstance(values, str) or not all(isinstance(v, str) for v in values):
                problems.append(f"{where}: values must be a list of strings")
                values = ()
            set_(self, "values", tuple(dict.fromkeys(values)))
        pairs = []
        for variant, canonical in aliases:
            if not isinstance(variant, str) or not isinstance(canonical, str):
                problems.append(f"{where}: aliases must map strings to strings")
            elif self.values is not None and canonical not in self.values:
                problems.append(
                    f"{where}: alias {variant!r} points to {canonical!r}, "
                    "which is not one of its values"
                )
            else:
                pairs.append((variant, canonical))
        set_(self, "aliases", tuple(sorted(pairs)))
        if problems:
            raise QueryError(problems)
        folded: dict[str, tuple[str, ...]] = {}
        for v in self.values or ():
            key = fold_category(v)
            folded[key] = folded.get(key, ()) + (v,)
        set_(self, "_folded", folded)

    def _allowed(
        self,
        what: str,
        given: Any,
        universe: Sequence[str],
        defaults: Mapping[str, tuple[str, ...]],
        problems: list[str],
    ) -> tuple[str, ...]:
        if given is None:
            return defaults[self.type]
        if isinstance(given, str) or not isinstance(given, Iterable):
            problems.append(f"schema column {self.name!r}: {what} must be a list")
            return ()
        given = tuple(given)
        bad = [g for g in given if g not in universe]
        if bad:
            problems.append(
                f"schema column {self.name!r}: unknown {what} "
                f"{', '.join(map(describe_value, bad))}; allowed: "
                f"{', '.join(universe)}"
            )
        return tuple(g for g in universe if g in given)

    def normalize(self, value: str) -> str:
        """The canonical value a categorical filter value stands for.

        Matches exactly, then through ``aliases``, then on
        :func:`fold_category`. Columns without declared ``values`` (and
        non-categorical columns) return ``value`` unchanged.

        Raises
        ------
        ValueError
            If no canonical value matches, or two do; the message lists them.

        Examples
        --------
        >>> spec = ColumnSpec("sector", "categorical", values=["Non-Profit", "Corporate"],
        ...                   aliases={"NGO": "Non-Profit"})
        >>> spec.normalize("NON_PROFIT"), spec.normalize("ngo")
        ('Non-Profit', 'Non-Profit')
        """
        if self.values is None or value in self.values:
            return value
        key = fold_category(value)
        for variant, canonical in self.aliases:
            if variant == value or fold_category(variant) == key:
                return canonical
        found = self._folded.get(key, ())
        if len(found) == 1:
            return found[0]
        if found:
            raise ValueError(f"{value!r} could mean {_listing(found)}; give one exactly")
        raise ValueError(
            f"{value!r} is not a value of {self.name}; allowed: {_listing(self.values)}"
        )

    def to_dict(self) -> dict[str, Any]:
        """The spec as JSON (defaults left out)."""
        out: dict[str, Any] = {"type": self.type}
        if self.integer:
            out["integer"] = True
        if self.operators != DEFAULT_OPERATORS[self.type]:
            out["operators"] = list(self.operators or ())
        if self.aggregations != DEFAULT_AGGREGATIONS[self.type]:
            out["aggregations"] = list(self.aggregations or ())
        if self.values is not None:
            out["values"] = list(self.values)
        if self.aliases:
            out["aliases"] = dict(self.aliases)
        return out


def _spec(name: Any, value: Any) -> ColumnSpec:
    if isinstance(value, ColumnSpec):
        return value if value.name == name else dataclasses.replace(value, name=name)
    if isinstance(value, str):
        return ColumnSpec(name, value)
    if isinstance(value, Mapping):
        unknown = [k for k in value if k not in _SPEC_KEYS]
        if unknown:
            raise QueryError(
                f"schema column {describe_value(name)}: unknown key "
                f"{describe_value(unknown[0])}; allowed: {', '.join(_SPEC_KEYS)}"
            )
        if "type" not in value:
            raise QueryError(
                f'schema column {describe_value(name)}: missing "type" ({", ".join(COLUMN_TYPES)})'
            )
        return ColumnSpec(name, **dict(value))
    raise QueryError(
        f"schema column {describe_value(name)}: expected a type name or an "
        f'object with a "type", got {describe_value(value)}'
    )


class QuerySchema:
    """The columns a query may use, and how far it may go.

    Parameters
    ----------
    columns : mapping or sequence of ColumnSpec
        ``{"income": "numeric", "sector": {"type": "categorical", "values":
        [...]}}`` or a list of :class:`ColumnSpec`. Order is kept: it is the
        default column order of ``filter`` results.
    max_limit : int, default MAX_QUERY_LIMIT
        The most rows any query returns; larger limits are clamped.

    Raises
    ------
    QueryError
        For an invalid column spec or ``max_limit`` (every problem listed).

    Notes
    -----
    Immutable; safe to share between threads. Narrow an inferred schema
    with :meth:`restrict` and :meth:`with_column`.

    Examples
    --------
    >>> s = QuerySchema({"age": {"type": "numeric", "integer": True}, "name": "text"},
    ...                 max_limit=50)
    >>> s.names, s.max_limit, "age" in s
    (('age', 'name'), 50, True)
    """

    def __init__(
        self,
        columns: Mapping[str, Any] | Sequence[ColumnSpec],
        *,
        max_limit: int = MAX_QUERY_LIMIT,
    ):
        problems: list[str] = []
        specs: list[ColumnSpec] = []
        if isinstance(columns, Mapping):
            items: list[tuple[Any, Any]] = list(columns.items())
        elif isinstance(columns, (list, tuple)):
            items = [(getattr(c, "name", None), c) for c in columns]
        else:
            raise QueryError(
                f"schema columns: expected an object or a list of ColumnSpec, "
                f"got {describe_value(columns)}"
            )
        for name, value in items:
            if isinstance(columns, (list, tuple)) and not isinstance(value, ColumnSpec):
                problems.append(
                    f"schema columns: expected ColumnSpec items, got {describe_value(value)}"
                )
                continue
            try:
                specs.append(_spec(name, value))
            except QueryError as exc:
                problems.extend(exc.problems)
        names = [s.name for s in specs]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            problems.append(f"schema columns: {', '.join(map(repr, dupes))} declared twice")
        if isinstance(max_limit, bool) or not isinstance(max_limit, int) or max_limit < 1:
            problems.append(
                f"max_limit: expected a positive integer, got {describe_value(max_limit)}"
            )
        if problems:
            raise QueryError(problems)
        self._specs = tuple(specs)
        self._by_name = {s.name: s for s in specs}
        self._max_limit = max_limit

    # ------------------------------------------------------------ access
    @property
    def names(self) -> tuple[str, ...]:
        """Column names, in schema order."""
        return tuple(self._by_name)

    @property
    def columns(self) -> tuple[ColumnSpec, ...]:
        """The column specs, in schema order."""
        return self._specs

    @property
    def max_limit(self) -> int:
        """The most rows a query returns."""
        return self._max_limit

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._by_name

    def __getitem__(self, name: str) -> ColumnSpec:
        try:
            return self._by_name[name]
        except (KeyError, TypeError):
            raise KeyError(
                f"{name!r} is not a column of the schema; columns: {', '.join(self.names)}"
            ) from None

    def __len__(self) -> int:
        return len(self._specs)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, QuerySchema)
            and self._specs == other._specs
            and self._max_limit == other._max_limit
        )

    def __hash__(self) -> int:
        return hash((self._specs, self._max_limit))

    def __repr__(self) -> str:
        cols = ", ".join(f"{s.name}: {s.type}" for s in self._specs)
        return f"QuerySchema({{{cols}}}, max_limit={self._max_limit})"

    # ------------------------------------------------------------ narrowing
    def restrict(self, names: Iterable[str]) -> QuerySchema:
        """A schema with only these columns (in the order given).

        Raises
        ------
        QueryError
            If a name is not in this schema.

        Examples
        --------
        >>> QuerySchema({"a": "numeric", "b": "text"}).restrict(["b"]).names
        ('b',)
        """
        names = list(names)
        unknown = [n for n in names if n not in self]
        if unknown:
            raise QueryError(
                f"restrict: {', '.join(map(describe_value, unknown))} not in the "
                f"schema; columns: {', '.join(self.names)}"
            )
        return QuerySchema([self._by_name[n] for n in names], max_limit=self._max_limit)

    def with_column(self, name: str, **changes: Any) -> QuerySchema:
        """A schema with one column added or changed.

        ``changes`` are :class:`ColumnSpec` fields (``type``, ``operators``,
        ``aggregations``, ``values``, ``aliases``, ``integer``). A new column
        needs ``type``.

        >>> s = QuerySchema({"a": "numeric"}).with_column("a", operators=["$eq"])
        >>> s["a"].operators
        ('$eq',)
        """
        specs = list(self._specs)
        if name in self:
            i = self.names.index(name)
            old = specs[i]
            fields = {f: getattr(old, f) for f in _SPEC_KEYS}
            if "type" in changes and changes["type"] != old.type:
                fields.update(operators=None, aggregations=None)
            fields.update(changes)
            specs[i] = _spec(name, fields)
        else:
            specs.append(_spec(name, changes))
        return QuerySchema(specs, max_limit=self._max_limit)

    def with_max_limit(self, max_limit: int) -> QuerySchema:
        """The same columns with another ``max_limit``."""
        return QuerySchema(self._specs, max_limit=max_limit)

    # ------------------------------------------------------------ JSON
    def to_dict(self) -> dict[str, Any]:
        """The schema as JSON: ``{"max_limit": n, "columns": {name: spec}}``.

        Give it to a planner (it says what a query may use) or save it,
        edit it and load it back with :meth:`from_dict`.
        """
        return {
            "max_limit": self._max_limit,
            "columns": {s.name: s.to_dict() for s in self._specs},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> QuerySchema:
        """Load a schema written by :meth:`to_dict` (or by hand).

        Raises
        ------
        QueryError
            If ``data`` is not such an object, listing what is wrong.

        Examples
        --------
        >>> QuerySchema.from_dict({"columns": {"age": "numeric"}}).names
        ('age',)
        """
        if not isinstance(data, Mapping) or "columns" not in data:
            raise QueryError(
                'a schema must be an object with "columns" (and optionally "max_limit")'
            )
        unknown = [k for k in data if k not in ("columns", "max_limit")]
        if unknown:
            raise QueryError(
                f"schema: unknown key {describe_value(unknown[0])}; allowed: columns, max_limit"
            )
        return cls(data["columns"], max_limit=data.get("max_limit", MAX_QUERY_LIMIT))

    # ------------------------------------------------------------ inference
    @classmethod
    def from_frame(
        cls,
        df: pd.DataFrame,
        *,
        columns: Iterable[str] | None = None,
        types: Mapping[str, str] | None = None,
        max_categories: int = 50,
        max_limit: int = MAX_QUERY_LIMIT,
    ) -> QuerySchema:
        """Infer a schema from a DataFrame; narrow it before use if you like.

        Integer dtypes become ``numeric`` with ``integer=True``, floats
        ``numeric``, datetimes ``date``; string columns become
        ``categorical`` (values = the distinct strings) when they have at
        most ``max_categories`` distinct values and each value repeats on
        average (distinct <= half the non-missing cells), else ``text``.
        A column forced to ``categorical`` with more distinct values than
        ``max_categories`` gets no ``values`` (any string is accepted).
        Other dtypes (bool, timedelta, mixed objects) and non-string column
        names are left out unless ``types`` names them.

        Parameters
        ----------
        df : pandas.DataFrame
        columns : iterable of str, optional
            Only these columns (default: all).
        types : mapping of str to str, optional
            Types to use instead of the inferred ones.
        max_categories : int, default 50
        max_limit : int, default MAX_QUERY_LIMIT

        Raises
        ------
        QueryError
            For a requested column that is missing or has no usable type.

        Examples
        --------
        >>> import pandas as pd
        >>> df = pd.DataFrame({"n": [1, 2], "when": pd.to_datetime(["2024-01-01", None])})
        >>> QuerySchema.from_frame(df).to_dict()["columns"]
        {'n': {'type': 'numeric', 'integer': True}, 'when': {'type': 'date'}}
        """
        import pandas as pd  # on use: a corpus's schema never needs pandas

        if not isinstance(df, pd.DataFrame):
            raise TypeError(f"df must be a pandas DataFrame, got {type(df).__name__}")
        types = dict(types or {})
        wanted = list(df.columns) if columns is None else list(columns)
        problems = [
            f"from_frame: {describe_value(c)} is not a column of the frame"
            for c in wanted
            if c not in df.columns
        ]
        specs = []
        for name in wanted:
            if name not in df.columns or not isinstance(name, str):
                continue
            spec = _infer_pandas(name, df[name], types.get(name), max_categories)
            if spec is None:
                if columns is not None:
                    problems.append(
                        f"from_frame: column {name!r} has dtype "
                        f"{df[name].dtype}, which no query type fits; give it "
                        "a type in types="
                    )
                continue
            specs.append(spec)
        if problems:
            raise QueryError(problems)
        return cls(specs, max_limit=max_limit)


def infer_string_spec(
    name: str, n_present: int, distinct: Sequence[str] | None, max_categories: int
) -> ColumnSpec:
    """Categorical or text for a string column, by the rule of
    :meth:`QuerySchema.from_frame`. ``distinct`` is the sorted distinct
    values, or ``None`` when there are more than ``max_categories``."""
    if distinct is not None and len(distinct) <= max_categories and 2 * len(distinct) <= n_present:
        return ColumnSpec(name, "categorical", values=tuple(distinct))
    return ColumnSpec(name, "text")


def _pandas_kind(s: pd.Series) -> str | None:
    """integer, float, date, string, or None (no query type fits)."""
    import pandas as pd

    dtype = s.dtype
    api = pd.api.types
    if api.is_bool_dtype(dtype):
        return None
    if api.is_integer_dtype(dtype):
        return "integer"
    if api.is_float_dtype(dtype):
        return "float"
    if api.is_datetime64_any_dtype(dtype):
        return "date"
    if isinstance(dtype, pd.CategoricalDtype):
        return "string" if all(isinstance(c, str) for c in dtype.categories) else None
    inferred = api.infer_dtype(s, skipna=True)
    return {
        "string": "string",
        "empty": "string",
        "date": "date",
        "datetime": "date",
        "datetime64": "date",
    }.get(inferred)


def _infer_pandas(
    name: str, s: pd.Series, forced: str | None, max_categories: int
) -> ColumnSpec | None:
    kind = _pandas_kind(s)
    if forced == "numeric" or (forced is None and kind in ("integer", "float")):
        return ColumnSpec(name, "numeric", integer=kind == "integer")
    if forced is None and kind == "date":
        return ColumnSpec(name, "date")
    if kind == "string" and forced in (None, "categorical"):
        present = s.dropna()
        distinct = present.astype(object).unique()
        values = sorted(distinct) if len(distinct) <= max_categories else None
        if forced == "categorical":
            return ColumnSpec(
                name, "categorical", values=None if values is None else tuple(values)
            )
        return infer_string_spec(name, len(present), values, max_categories)
    return None if forced is None else ColumnSpec(name, forced)
