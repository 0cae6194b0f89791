"""The corpus registry: how to rebuild each named corpus, as data.

``corpora.json`` (see :func:`rowvoi.corpus.storage.paths.registry_path`) maps each
corpus name to the recipe that rebuilds it, so ``rowvoi build NAME`` works
again next week without repeating the flags::

    {"format": "rowvoi-corpora", "version": 1,
     "corpora": {
       "notes": {"kind": "files", "root": "/home/me/notes", "pattern": "\\\\.md$",
                 "embedder": "minilm"},
       "papers": {"kind": "records", "path": "/data/papers.jsonl", "id_key": "id",
                  "text_key": "abstract", "metadata_keys": ["year"],
                  "embedder": "hashing",
                  "strategy": {"name": "Chunked", "params": {"max_tokens": 250, ...}}}}}

Kinds:

``files``
    ``root`` (a folder), optional ``pattern`` (a regular expression),
    ``exclude`` (directory names) and ``follow_symlinks`` (true: also index
    what symbolic links lead to outside the root):
    :func:`~rowvoi.corpus.indexing.sources.from_files`.
``records``
    ``path`` (a ``.jsonl``/``.json``/``.csv``/``.parquet`` file) or
    ``fetcher`` (a ``"module:attr"`` reference: building imports that
    module, which runs its code), with ``id_key``, ``text_key`` and
    ``metadata_keys``: :func:`~rowvoi.corpus.indexing.sources.from_records`.
``mcp_tools``
    ``path`` (a JSON tool catalogue) or ``fetcher`` (a ``"module:attr"``
    reference, as for records):
    :func:`~rowvoi.corpus.indexing.mcp_tools.from_mcp_tools`.

Each entry may also hold ``embedder`` (a spec string), ``strategy`` (a
shipped strategy's spec), ``filter_types``, ``edges`` (an edge
extractor's spec, e.g. ``{"kind": "fields", "fields": {"parent":
"PARENT"}}``: see :mod:`rowvoi.corpus.indexing.edges`) and ``maintenance`` (a policy,
see :mod:`rowvoi.corpus.maintenance.runs`; a re-registration without one keeps
the old one). Keys this version does not know are kept as they are when the
file is rewritten, and the file is replaced atomically under a lock, so
concurrent registrations do not lose each other. The file and its lock
(``corpora.json.lock``, never followed through a symbolic link) are
``0600``, a folder created for them ``0700``, whatever the umask.

The registry is trusted: it is written by its owner (``rowvoi register``,
``rowvoi build NAME --files``), and a files corpus's ``root`` here is the
folder :func:`~rowvoi.corpus.retrieval.disclosure.disclose` may read pointers from
(never the root a corpus's own ``docs.sqlite`` names).

Examples
--------
>>> import os, tempfile
>>> os.environ["ROWVOI_HOME"] = tempfile.mkdtemp()
>>> notes = tempfile.mkdtemp()
>>> register("notes", "files", root=notes)["kind"]
'files'
>>> sorted(registered())
['notes']
>>> source_for("notes").indexing_strategy
WholeText(text_key=None, kind='document')
>>> unregister("notes"); get("notes") is None
True
>>> del os.environ["ROWVOI_HOME"]
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rowvoi.corpus.base import CorpusNotFound, EmbedderError
from rowvoi.corpus.embedders import check_spec
from rowvoi.corpus.indexing.build import build
from rowvoi.corpus.indexing.edges import extractor_from_spec
from rowvoi.corpus.indexing.mcp_tools import from_mcp_tools
from rowvoi.corpus.indexing.sources import (
    FILTER_TYPES,
    CorpusSource,
    from_files,
    from_records,
    from_records_file,
)
from rowvoi.corpus.indexing.strategy import strategy_from_spec, strategy_to_spec
from rowvoi.corpus.maintenance.policy import policy_from_spec
from rowvoi.corpus.storage.paths import check_name, registry_path
from rowvoi.corpus.storage.registry_file import REGISTRY_VERSION, edit, get, registered

__all__ = [
    "KINDS",
    "REGISTRY_VERSION",
    "register",
    "make_entry",
    "unregister",
    "get",
    "registered",
    "source_from_entry",
    "source_for",
    "build_corpus",
]

#: The kinds of registered corpora.
KINDS = ("files", "records", "mcp_tools")
_PARAMS = {
    "files": {"root", "pattern", "exclude", "follow_symlinks"},
    "records": {"path", "fetcher", "id_key", "text_key", "metadata_keys"},
    "mcp_tools": {"path", "fetcher"},
}
_ALL_PARAMS = set().union(*_PARAMS.values())
_COMMON = {"kind", "embedder", "strategy", "filter_types", "edges", "maintenance"}


def _check_entry(name: str, entry: Mapping[str, Any]) -> dict[str, Any]:
    kind = entry.get("kind")
    if kind not in KINDS:
        raise ValueError(f"corpus {name!r}: kind {kind!r}; kinds are {', '.join(KINDS)}")
    unknown = set(entry) - _PARAMS[kind] - _COMMON
    if unknown:
        raise ValueError(
            f"corpus {name!r}: {kind} corpora take no "
            f"{', '.join(sorted(unknown))} (they take "
            f"{', '.join(sorted(_PARAMS[kind]))})"
        )
    out = {k: v for k, v in entry.items() if v is not None}
    if kind == "files":
        if not isinstance(out.get("root"), str) or not out["root"]:
            raise ValueError(f"corpus {name!r}: a files corpus needs root=FOLDER")
        out["root"] = str(Path(out["root"]).expanduser().resolve())
        follow = out.pop("follow_symlinks", False)
        if not isinstance(follow, bool):
            raise ValueError(f"corpus {name!r}: follow_symlinks is true or false, not {follow!r}")
        if follow:
            out["follow_symlinks"] = True
    else:
        has = [k for k in ("path", "fetcher") if out.get(k)]
        if len(has) != 1:
            what = "an mcp_tools corpus" if kind == "mcp_tools" else "a records corpus"
            raise ValueError(
                f"corpus {name!r}: {what} needs exactly one of path=FILE or fetcher='module:attr'"
            )
        if "path" in out:
            out["path"] = str(Path(out["path"]).expanduser().resolve())
        keys = out.get("metadata_keys")
        if keys is not None and (
            isinstance(keys, str) or not all(isinstance(k, str) for k in keys)
        ):
            raise ValueError(f"corpus {name!r}: metadata_keys must be a list of field names")
        if keys is not None:
            out["metadata_keys"] = list(keys)
    spec = out.get("embedder", "default")
    if not isinstance(spec, str):
        raise ValueError(
            f"corpus {name!r}: the registry stores embedder specs as strings "
            "('minilm', 'hashing', 'hashing:DIM'); build callables from Python"
        )
    try:
        out["embedder"] = check_spec(spec)
    except EmbedderError as exc:
        raise ValueError(f"corpus {name!r}: {exc}") from None
    strategy = out.get("strategy")
    if strategy is not None and not isinstance(strategy, Mapping):
        out["strategy"] = strategy_to_spec(strategy)
    elif strategy is not None:
        strategy_from_spec(strategy)  # validates
        out["strategy"] = dict(strategy)
    edges = out.get("edges")
    if edges is not None:
        if not isinstance(edges, Mapping):
            raise ValueError(f"corpus {name!r}: edges is an edge extractor spec (a mapping)")
        try:
            extractor_from_spec(edges)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"corpus {name!r}: {exc}") from None
        out["edges"] = dict(edges)
    if out.get("maintenance") is not None:
        try:
            out["maintenance"] = policy_from_spec(out["maintenance"]).to_dict()
        except (TypeError, ValueError) as exc:
            raise ValueError(f"corpus {name!r}: maintenance {exc}") from None
    types = out.get("filter_types")
    if types is not None:
        if not isinstance(types, Mapping) or any(v not in FILTER_TYPES for v in types.values()):
            raise ValueError(
                f"corpus {name!r}: filter_types maps fields to one of {', '.join(FILTER_TYPES)}"
            )
        out["filter_types"] = dict(types)
    return out


def register(
    name: str, kind: str, *, embedder: str = "default", strategy: Any = None, **params: Any
) -> dict[str, Any]:
    """Register (or overwrite) the recipe of corpus ``name``; returns the
    stored entry. Built data is not touched; the next build uses it.

    Parameters
    ----------
    name : str
    kind : {"files", "records", "mcp_tools"}
    embedder : str
        An embedder spec string.
    strategy : IndexingStrategy or spec dict, optional
        A shipped strategy (stored as its spec).
    **params
        The kind's parameters (see the module notes), ``filter_types``, and
        ``maintenance`` (a policy spec such as ``"interval:24h"``: see
        :func:`rowvoi.corpus.maintenance.policy.policy_from_spec`).

    Raises
    ------
    ValueError
        An unknown kind or parameter, a missing ``root``/``path``/``fetcher``,
        a non-string embedder, a custom strategy.

    Examples
    --------
    >>> import os, tempfile
    >>> os.environ["ROWVOI_HOME"] = tempfile.mkdtemp()
    >>> register("papers", "records", path="papers.jsonl", metadata_keys=["year"],
    ...          embedder="hashing")["kind"]
    'records'
    >>> register("papers", "skills")
    Traceback (most recent call last):
    ...
    ValueError: corpus 'papers': kind 'skills'; kinds are files, records, mcp_tools
    >>> del os.environ["ROWVOI_HOME"]
    """
    entry = make_entry(name, kind, embedder=embedder, strategy=strategy, **params)
    with edit() as doc:
        old = doc["corpora"].get(name) or {}
        # keys of later versions (maintenance policies, ...) survive a re-registration
        known = _COMMON | _ALL_PARAMS
        keep = {k: v for k, v in old.items() if k not in known or k == "maintenance"}
        doc["corpora"][name] = {**keep, **entry}
        return dict(doc["corpora"][name])


def make_entry(
    name: str, kind: str, *, embedder: str = "default", strategy: Any = None, **params: Any
) -> dict[str, Any]:
    """The entry :func:`register` would store for these arguments,
    validated and normalised, without storing it (``rowvoi build`` builds
    from it first, and registers it only once the build has committed).

    Raises what :func:`register` raises.

    >>> import os, tempfile
    >>> os.environ["ROWVOI_HOME"] = tempfile.mkdtemp()
    >>> make_entry("notes", "files", root="/srv/notes", embedder="hashing")["root"]
    '/srv/notes'
    >>> get("notes") is None
    True
    >>> del os.environ["ROWVOI_HOME"]
    """
    check_name(name)
    return _check_entry(name, {"kind": kind, "embedder": embedder, "strategy": strategy, **params})


def unregister(name: str) -> None:
    """Remove ``name`` from the registry (built data is kept). Unknown
    names are ignored.

    >>> import os, tempfile
    >>> os.environ["ROWVOI_HOME"] = tempfile.mkdtemp()
    >>> unregister("never-registered"); registered()
    {}
    >>> del os.environ["ROWVOI_HOME"]
    """
    check_name(name)
    if not registry_path().exists():
        return
    with edit() as doc:
        doc["corpora"].pop(name, None)


def source_from_entry(name: str, entry: Mapping[str, Any]) -> CorpusSource:
    """The :class:`CorpusSource` a registry entry describes.

    Raises
    ------
    ValueError
        A malformed entry (named).

    Examples
    --------
    >>> source_from_entry("p", {"kind": "records", "fetcher": "json:loads",
    ...                         "text_key": "abstract", "maintenance": {}}).name
    'p'
    """
    known = (_COMMON - {"maintenance"}) | _ALL_PARAMS
    e = _check_entry(name, {k: v for k, v in entry.items() if k in known})
    strategy = strategy_from_spec(e.get("strategy"))
    common = {"name": name, "strategy": strategy, "embedder": e.get("embedder", "default")}
    if e.get("filter_types"):
        common["filter_types"] = e["filter_types"]
    if e["kind"] == "files":
        files_kw: dict[str, Any] = {
            k: e[k] for k in ("pattern", "exclude", "follow_symlinks") if k in e
        }
        return from_files(e["root"], **files_kw, **common)
    if e["kind"] == "mcp_tools":
        return from_mcp_tools(Path(e["path"]) if "path" in e else e["fetcher"], **common)
    kw: dict[str, Any] = {k: e[k] for k in ("id_key", "text_key", "metadata_keys") if k in e}
    if "path" in e:
        return from_records_file(e["path"], **kw, **common)
    return from_records(fetcher=e["fetcher"], **kw, **common)


def source_for(name: str) -> CorpusSource:
    """The registered source of ``name``.

    Raises
    ------
    CorpusNotFound
        ``name`` is not registered; the message says how to register it.

    Examples
    --------
    >>> import os, tempfile
    >>> os.environ["ROWVOI_HOME"] = tempfile.mkdtemp()
    >>> source_for("ghost")
    Traceback (most recent call last):
    ...
    rowvoi.corpus.base.CorpusNotFound: corpus 'ghost' is not registered: ...
    >>> del os.environ["ROWVOI_HOME"]
    """
    entry = get(name)
    if entry is None:
        raise CorpusNotFound(
            f"corpus {name!r} is not registered: give its source "
            f"(rowvoi build {name} --files FOLDER, or --records FILE), or "
            f"register it: rowvoi register {name} --files FOLDER"
        )
    return source_from_entry(name, entry)


def build_corpus(name: str, **build_kwargs: Any) -> Any:
    """Build the registered corpus ``name`` (see :func:`rowvoi.corpus.build`).

    >>> import os, tempfile, pathlib
    >>> os.environ["ROWVOI_HOME"] = tempfile.mkdtemp()
    >>> d = pathlib.Path(tempfile.mkdtemp()); _ = (d / "a.md").write_text("lift")
    >>> _ = register("notes", "files", root=str(d), embedder="hashing:16")
    >>> build_corpus("notes").last_build.n_new
    1
    >>> del os.environ["ROWVOI_HOME"]
    """
    entry = get(name)
    if entry is not None and entry.get("edges") and "edges" not in build_kwargs:
        build_kwargs["edges"] = extractor_from_spec(entry["edges"])
    return build(source_for(name), **build_kwargs)
