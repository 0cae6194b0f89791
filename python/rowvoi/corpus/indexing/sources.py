"""Corpus sources: what a corpus holds and how to tell what changed.

A :class:`CorpusSource` says *what* a corpus is, independent of how it is
stored:

``scope``
    a mapping ``{artifact id: raw payload}`` enumerating the corpus (a
    dict, a lazy view of a folder, records fetched by a function);
``change_signal``
    ``(artifact_id, raw) -> version string``; a build re-indexes an
    artifact when its version differs from the one in the corpus's ledger
    (default :func:`content_hash_signal`);
``indexing_strategy``
    how a payload becomes surfaces (:mod:`rowvoi.corpus.indexing.strategy`);
``embedder``
    the embedder spec (:mod:`rowvoi.corpus.embedders`);
``metadata_of``
    ``(artifact_id, raw) -> dict`` of filter fields, added to the
    strategy's; ``filter_types`` declares their types where inference
    would guess wrong (``{"year": "numeric", "published": "date",
    "venue": "categorical"}``).

Constructors: :func:`from_mapping`, :func:`from_files` (lazy: files are
read when the build asks for them), :func:`from_records` (a fetcher
function, or a ``"module:attr"`` reference -- importing it runs that
module's code, so only name modules you trust), :func:`from_dataframe`, and
:func:`from_records_file` (JSON Lines, CSV or Parquet, as the ``rowvoi
build --records`` command reads them); a catalogue of MCP tools has its
own, :func:`rowvoi.corpus.from_mcp_tools` (:mod:`rowvoi.corpus.indexing.mcp_tools`).

Examples
--------
>>> src = from_mapping({"a": "Lift and drag", "b": "Heat transfer"}, name="notes")
>>> sorted(aid for aid, _ in src.items())
['a', 'b']
>>> src = from_records(name="papers", fetcher=lambda: [
...     {"id": 1, "text": "Flow over wings", "year": 1962}], metadata_keys=["year"])
>>> [(aid, src.metadata_of(aid, raw)) for aid, raw in src.items()]
[('1', {'year': 1962})]
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import importlib
import json
import math
import numbers
import os
import re
import stat
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import rowvoi.corpus._confine as _confine
from rowvoi.corpus.base import ledger_key
from rowvoi.corpus.indexing.strategy import Chunked, WholeText, strategy_id
from rowvoi.corpus.storage.paths import check_name

__all__ = [
    "CorpusSource",
    "FileScope",
    "FileScan",
    "SkippedFileWarning",
    "SKIP_REASONS",
    "TRUST_SKIPS",
    "content_hash_signal",
    "resolve_fetcher",
    "from_mapping",
    "from_files",
    "from_records",
    "from_records_file",
    "from_dataframe",
    "read_records",
    "DFLT_EXCLUDE_DIRS",
    "DFLT_FILE_PATTERN",
    "FILTER_TYPES",
]

#: Directory names :func:`from_files` never descends into (also any name
#: starting with a dot).
DFLT_EXCLUDE_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".ipynb_checkpoints",
        ".obsidian",
        ".svn",
        ".tox",
        ".venv",
        "__pycache__",
        "build",
        "dist",
        "node_modules",
        "site-packages",
        "venv",
    }
)
#: Default :func:`from_files` pattern: Markdown and text files.
DFLT_FILE_PATTERN = r".*\.(md|markdown|txt|rst)$"
#: Types a filter field may be declared with (those of
#: :class:`rowvoi.query.QuerySchema`).
FILTER_TYPES = ("numeric", "categorical", "text", "date")


def _canonical(raw: Any) -> bytes:
    """Bytes that identify a payload's content: text as UTF-8, mappings and
    lists as canonical JSON (sorted keys; dates in ISO form)."""
    if isinstance(raw, str):
        return b"s" + raw.encode("utf-8", "surrogatepass")
    if isinstance(raw, (bytes, bytearray)):
        return b"b" + bytes(raw)

    def default(o: Any) -> Any:
        if isinstance(o, (_dt.date, _dt.datetime)):
            return o.isoformat()
        if hasattr(o, "item"):
            return o.item()
        if isinstance(o, (set, frozenset)):
            return sorted(o, key=repr)
        return repr(o)

    return b"j" + json.dumps(
        raw, sort_keys=True, default=default, ensure_ascii=False, separators=(",", ":")
    ).encode("utf-8", "surrogatepass")


def content_hash_signal(artifact_id: str, raw: Any) -> str:
    """The default change signal: SHA-256 (hex) of the payload's content
    (text as is; mappings as canonical JSON, so key order does not count).

    >>> content_hash_signal("a", {"x": 1, "y": 2}) == content_hash_signal("a", {"y": 2, "x": 1})
    True
    >>> len(content_hash_signal("a", "text"))
    64
    """
    if type(raw) is str:  # the common case, without the dispatch of _canonical
        return hashlib.sha256(b"s" + raw.encode("utf-8", "surrogatepass")).hexdigest()
    return hashlib.sha256(_canonical(raw)).hexdigest()


class CorpusSource:
    """A corpus definition: scope, change signal, strategy, embedder.

    Parameters
    ----------
    name : str or None
        The corpus name (see :func:`rowvoi.corpus.storage.paths.check_name`);
        ``None`` for an unnamed source (build it into a given store).
    scope : mapping
        ``{artifact id: raw}``; ids are strings (ints are turned into their
        decimal text).
    indexing_strategy : IndexingStrategy, optional
        Default :class:`~rowvoi.corpus.indexing.strategy.WholeText`.
    change_signal : callable, optional
        ``(artifact_id, raw) -> str``; default :func:`content_hash_signal`.
    embedder : str, callable or embedder
        The embedder spec (default ``"default"``, MiniLM).
    metadata_of : callable, optional
        ``(artifact_id, raw) -> dict`` of filter fields.
    filter_types : mapping, optional
        Declared filter field types (:data:`FILTER_TYPES`); other fields
        are typed from their values (numbers numeric, dates date, strings
        text, booleans 0/1 numbers).
    spec : dict, optional
        How to recreate this source from data (set by the constructors that
        can: files, records files, ``module:attr`` fetchers); the registry
        stores it.

    Thread-safety: a source is read by one build at a time; its scope is
    iterated once per build.

    Examples
    --------
    >>> src = CorpusSource("papers", {"p1": {"text": "Lift", "year": 1962}},
    ...                    metadata_of=lambda aid, raw: {"year": raw["year"]},
    ...                    filter_types={"year": "numeric"}, embedder="hashing")
    >>> [(aid, src.filter_fields(aid, raw, {})) for aid, raw in src.items()]
    [('p1', {'year': 1962})]
    """

    def __init__(
        self,
        name: str | None,
        scope: Mapping[Any, Any],
        indexing_strategy: Any = None,
        change_signal: Callable[[str, Any], str] | None = None,
        embedder: Any = "default",
        metadata_of: Callable[[str, Any], Mapping[str, Any]] | None = None,
        *,
        filter_types: Mapping[str, str] | None = None,
        spec: Mapping[str, Any] | None = None,
    ) -> None:
        self.name = None if name is None else check_name(name)
        if not isinstance(scope, Mapping):
            raise TypeError(f"scope must be a mapping {{id: raw}}, not {type(scope).__name__}")
        self.scope = scope
        self.indexing_strategy = WholeText() if indexing_strategy is None else indexing_strategy
        strategy_id(self.indexing_strategy)  # a strategy, or TypeError now
        self.change_signal = content_hash_signal if change_signal is None else change_signal
        if not callable(self.change_signal):
            raise TypeError("change_signal must be a callable (artifact_id, raw) -> str")
        if metadata_of is not None and not callable(metadata_of):
            raise TypeError("metadata_of must be a callable (artifact_id, raw) -> dict")
        self.embedder = embedder
        self.metadata_of = metadata_of
        self.filter_types = _check_filter_types(filter_types)
        self.spec = None if spec is None else dict(spec)

    def __repr__(self) -> str:
        return (
            f"CorpusSource(name={self.name!r}, strategy={self.indexing_strategy!r}, "
            f"embedder={self.embedder!r})"
        )

    def items(self) -> Iterator[tuple[str, Any]]:
        """``(artifact_id, raw)`` pairs of the scope, ids as strings (for a
        folder, :meth:`FileScope.read_items`: files refused when read are
        left out)."""
        scope = self.scope
        if isinstance(scope, FileScope):
            yield from scope.read_items()
            return
        for key in scope:
            if type(key) is str and key and "\x00" not in key:
                yield key, scope[key]
            else:
                yield ledger_key(key), scope[key]

    def ids(self) -> Iterator[str]:
        """The artifact ids of the scope (without reading payloads)."""
        for key in self.scope:
            yield ledger_key(key)

    def get(self, artifact_id: str) -> Any:
        """The payload of one artifact (``KeyError`` if absent)."""
        if artifact_id in self.scope:
            return self.scope[artifact_id]
        for key in self.scope:
            if ledger_key(key) == artifact_id:
                return self.scope[key]
        raise KeyError(artifact_id)

    def skipped(self) -> dict[str, int]:
        """Entries the last walk of a folder source left out for a
        :data:`TRUST_SKIPS` reason (symbolic links out of the root, FIFOs,
        sockets and devices, names that are not UTF-8, unreadable files),
        as counts by reason; ``{}`` for other sources.

        >>> from_mapping({"a": "x"}).skipped()
        {}
        """
        scan = getattr(self.scope, "last_scan", None)
        return scan.skipped() if isinstance(scan, FileScan) else {}

    def filter_fields(
        self, artifact_id: str, raw: Any, plan_fields: Mapping[str, Any]
    ) -> dict[str, Any]:
        """The artifact's filter fields: the plan's, then ``metadata_of``'s."""
        out = dict(plan_fields)
        if self.metadata_of is not None:
            extra = self.metadata_of(artifact_id, raw)
            if extra:
                if not isinstance(extra, Mapping):
                    raise TypeError(
                        f"metadata_of({artifact_id!r}) returned {type(extra).__name__}, not a dict"
                    )
                out.update(extra)
        return out

    # the ir spellings
    @staticmethod
    def from_mapping(*args: Any, **kwargs: Any) -> CorpusSource:
        """:func:`from_mapping` (the ``ir`` spelling)."""
        return from_mapping(*args, **kwargs)

    @staticmethod
    def from_files(*args: Any, **kwargs: Any) -> CorpusSource:
        """:func:`from_files` (the ``ir`` spelling)."""
        return from_files(*args, **kwargs)

    @staticmethod
    def from_records(*args: Any, **kwargs: Any) -> CorpusSource:
        """:func:`from_records` (the ``ir`` spelling)."""
        return from_records(*args, **kwargs)

    @staticmethod
    def from_dataframe(*args: Any, **kwargs: Any) -> CorpusSource:
        """:func:`from_dataframe`."""
        return from_dataframe(*args, **kwargs)


def _check_filter_types(types: Mapping[str, str] | None) -> dict[str, str]:
    if types is None:
        return {}
    if not isinstance(types, Mapping):
        raise TypeError("filter_types must be a mapping {field: type}")
    out = {}
    for k, v in types.items():
        if not isinstance(k, str) or v not in FILTER_TYPES:
            raise ValueError(f"filter_types[{k!r}] = {v!r}: types are {', '.join(FILTER_TYPES)}")
        out[k] = v
    return out


def from_mapping(
    mapping: Mapping[Any, Any], *, name: str | None = None, strategy: Any = None, **kwargs: Any
) -> CorpusSource:
    """Any mapping ``{id: raw}`` as a corpus (an ad-hoc corpus: it cannot be
    recreated from the registry).

    Other keyword arguments go to :class:`CorpusSource`.

    >>> from_mapping({"x": "text"}, name="tmp").indexing_strategy
    WholeText(text_key=None, kind='document')
    """
    return CorpusSource(name, mapping, strategy, **kwargs)


# ------------------------------------------------------------------- files


#: Why :class:`FileScope` leaves an entry of its folder out, as
#: :class:`FileScan` (and :func:`rowvoi.corpus.maintenance.runs.coverage`)
#: report it: ``hidden`` (a name starting with a dot), ``pattern`` (the
#: path does not match), ``binary`` (a NUL byte in the first 8 KB),
#: ``symlink`` (a symbolic link leading outside the root, dangling, or a
#: link to a folder), ``special`` (a FIFO, socket or device: never opened
#: for reading), ``undecodable_name`` (a name that is not UTF-8, see
#: :class:`FileScope`), ``unreadable`` (no permission to read it).
SKIP_REASONS = (
    "pattern",
    "binary",
    "hidden",
    "symlink",
    "special",
    "undecodable_name",
    "unreadable",
)
#: The reasons a build reports as skipped (:attr:`BuildReport.skipped
#: <rowvoi.corpus.indexing.build.BuildReport>`): those a folder's owner did not
#: choose with the pattern.
TRUST_SKIPS = ("symlink", "special", "undecodable_name", "unreadable")
_BINARY_PROBE = 8192


class SkippedFileWarning(UserWarning):
    """A file of a :func:`from_files` folder was left out for a reason its
    owner should hear of (a name that is not UTF-8). The build goes on."""


class FileScan:
    """What one walk of a :class:`FileScope` folder found.

    Attributes
    ----------
    keys : list of str
        The artifact ids (relative paths with ``/``), sorted.
    excluded : dict of str to list of str
        Entries left out, by reason (every one of :data:`SKIP_REASONS` is
        a key); names that are not UTF-8 are shown with ``\\xNN`` escapes
        for their undecodable bytes.
    excluded_dirs : list of str
        Folders not walked: excluded names, hidden folders, links to
        folders (unless followed), folders already walked (a loop).
    """

    __slots__ = ("excluded", "excluded_dirs", "keys")

    def __init__(self) -> None:
        self.keys: list[str] = []
        self.excluded: dict[str, list[str]] = {r: [] for r in SKIP_REASONS}
        self.excluded_dirs: list[str] = []

    def skipped(self) -> dict[str, int]:
        """Counts of the :data:`TRUST_SKIPS` reasons (only those > 0)."""
        return {r: len(self.excluded[r]) for r in TRUST_SKIPS if self.excluded[r]}


def _shown(rel: str) -> str:
    """A relative path as text that can be printed and stored: undecodable
    bytes (carried as surrogates) become ``\\xNN``."""
    return os.fsencode(rel).decode("utf-8", "backslashreplace")


def _undecodable(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


class FileScope(Mapping[str, str]):
    """A lazy mapping over the text files of a folder: keys are paths
    relative to ``root`` (with ``/``), values the files' text, read on
    access (UTF-8; invalid bytes replaced).

    Each iteration walks the folder again (a source object can serve many
    builds), in sorted order.
    Directories named in ``exclude`` (default :data:`DFLT_EXCLUDE_DIRS`)
    and names starting with a dot are skipped, as are files whose first
    8 KB hold a NUL byte (binary files).

    Reads stay inside the root:

    * A symbolic link to a file is followed only when it resolves inside
      the root; one leading outside it (or dangling) is skipped, and
      symbolic links to folders are not walked -- unless
      ``follow_symlinks=True``, which follows both wherever they lead
      (each folder walked once: no loops). Disclosure then refuses the
      pointers of files outside the root unless its caller names their
      folders in ``roots=``.
    * Only regular files are read: FIFOs, sockets and devices are skipped
      without being opened for reading, so none can block a build. Each
      file is opened without following a final symbolic link, through
      folders opened the same way, with ``O_NONBLOCK``, and ``fstat``-ed
      before a byte is read: a file swapped for a link or a FIFO after the
      walk is refused too (left out of that build).
    * A name that is not valid UTF-8 cannot be an artifact id (ids and
      paths are stored as text): the file (or folder) is skipped with a
      :class:`SkippedFileWarning` naming its bytes, and the build goes on.
      Rename it to index it.

    What the last walk left out, and why, is in :attr:`last_scan` (a
    :class:`FileScan`); a build reports the counts
    (:attr:`~rowvoi.corpus.indexing.build.BuildReport.skipped`) and ``rowvoi
    coverage`` the paths.

    Parameters
    ----------
    root : path
        The folder (resolved once; its path must be UTF-8).
    pattern : str
        Regular expression searched in each relative path.
    exclude : iterable of str, optional
        Folder names never walked.
    follow_symlinks : bool
        Follow symbolic links out of the root (default False).

    Raises
    ------
    ValueError
        ``pattern`` is not a regular expression, or ``root``'s path is
        not UTF-8.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()); _ = (d / "a.md").write_text("hi")
    >>> scope = FileScope(d)
    >>> list(scope), scope["a.md"], "b.md" in scope
    (['a.md'], 'hi', False)
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        pattern: str = DFLT_FILE_PATTERN,
        exclude: Iterable[str] | None = None,
        *,
        follow_symlinks: bool = False,
    ) -> None:
        self.root = Path(root).expanduser().resolve()
        if _undecodable(str(self.root)):
            raise ValueError(
                f"folder {_shown(str(self.root))!r}: its path is not valid UTF-8 "
                f"({os.fsencode(str(self.root))!r}); rowvoi stores paths as text: "
                "rename the folder"
            )
        try:
            self._pattern = re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"pattern {pattern!r} is not a regular expression: {exc}") from None
        self.pattern = pattern
        self.exclude = DFLT_EXCLUDE_DIRS if exclude is None else frozenset(exclude)
        if not isinstance(follow_symlinks, bool):
            raise TypeError(f"follow_symlinks must be True or False, not {follow_symlinks!r}")
        self.follow_symlinks = follow_symlinks
        self._keys: list[str] | None = None
        self.last_scan: FileScan | None = None

    # ------------------------------------------------------------- walk
    def scan(self, *, warn: bool = True) -> FileScan:
        """Walk the folder now: what is in the scope and what is left
        out, by reason (see :class:`FileScan`). Also kept as
        :attr:`last_scan`. ``warn``: issue a :class:`SkippedFileWarning`
        per name that is not UTF-8 (a report that lists them passes
        False).

        Raises
        ------
        FileNotFoundError
            The folder is gone.
        """
        root = str(self.root)
        if not os.path.isdir(root):
            raise FileNotFoundError(f"{self.root}: no such directory")
        out = FileScan()
        seen_dirs = {_dir_id(os.stat(root))}
        stack = [""]
        while stack:
            rel_dir = stack.pop()
            here = os.path.join(root, rel_dir) if rel_dir else root
            try:
                entries = sorted(os.scandir(here), key=lambda e: e.name)
            except OSError:
                if rel_dir:
                    out.excluded_dirs.append(_shown(rel_dir))
                continue
            subdirs = []
            for e in entries:
                rel = f"{rel_dir}/{e.name}" if rel_dir else e.name
                kind = self._classify(e, rel, seen_dirs)
                if kind == "dir":
                    subdirs.append(rel)
                elif kind == "dir-skip":
                    out.excluded_dirs.append(_shown(rel))
                elif kind == "file":
                    out.keys.append(rel)
                else:
                    out.excluded[kind].append(_shown(rel))
                    if kind == "undecodable_name" and warn:
                        warnings.warn(
                            f"{self.root}: skipped {os.fsencode(rel)!r}: the name is not "
                            "valid UTF-8, so it cannot be an artifact id; rename it to "
                            "index it",
                            SkippedFileWarning,
                            stacklevel=2,
                        )
            stack.extend(reversed(subdirs))
        out.keys.sort()
        out.excluded_dirs.sort()
        for v in out.excluded.values():
            v.sort()
        self.last_scan = out
        return out

    def _classify(self, e: os.DirEntry[str], rel: str, seen_dirs: set[tuple[int, int]]) -> str:
        """``"file"`` (in the scope), ``"dir"`` (walk it), ``"dir-skip"``,
        or a :data:`SKIP_REASONS` reason."""
        name = e.name
        if _undecodable(name):
            return "undecodable_name"
        try:
            is_link = e.is_symlink()
            st = e.stat(follow_symlinks=False)
        except OSError:
            return "unreadable"
        if is_link:
            real = os.path.realpath(e.path)
            try:
                target: os.stat_result | None = os.stat(real)
            except OSError:
                target = None  # dangling, or a loop of links
            if target is not None and stat.S_ISDIR(target.st_mode):
                if not self.follow_symlinks or name.startswith(".") or name in self.exclude:
                    return "dir-skip"
                if _dir_id(target) in seen_dirs:
                    return "dir-skip"  # walked already: a loop, or twice
                seen_dirs.add(_dir_id(target))
                return "dir"
            if name.startswith("."):
                return "hidden"
            if target is None:
                return "symlink"
            if not self.follow_symlinks and not _confine.inside(real, str(self.root)):
                return "symlink"
            st = target
        elif stat.S_ISDIR(st.st_mode):
            if name in self.exclude or name.startswith("."):
                return "dir-skip"
            if self.follow_symlinks:
                if _dir_id(st) in seen_dirs:
                    return "dir-skip"
                seen_dirs.add(_dir_id(st))
            return "dir"
        if name.startswith("."):
            return "hidden"
        if not stat.S_ISREG(st.st_mode):
            return "special"
        if not self._pattern.search(rel):
            return "pattern"
        try:
            fd, _ = self._open(rel)
            head = _confine.read_fd(fd, _BINARY_PROBE)
        except _confine.Refused as r:
            return "symlink" if r.reason == "symlink" else "special"
        except FileNotFoundError:
            return "symlink" if is_link else "unreadable"
        except OSError:
            return "unreadable"
        return "binary" if b"\x00" in head else "file"

    def _open(self, key: str) -> tuple[int, os.stat_result]:
        """A descriptor of the regular file behind ``key`` (see the class
        notes); raises :class:`~rowvoi.corpus._confine.Refused` or the
        system's ``OSError``."""
        root = str(self.root)
        try:  # the common case: no link on the way (nothing to resolve)
            return _confine.open_beneath(root, key)
        except _confine.Refused as exc:
            if exc.reason != "symlink":
                raise
        # a link on the way: followed only to where it resolves inside the root
        rel = _confine.resolve_inside(os.path.join(root, key), root)
        if rel is not None:
            return _confine.open_beneath(root, rel)
        if self.follow_symlinks:
            return _confine.open_regular(os.path.realpath(os.path.join(root, key)))
        raise _confine.Refused(
            "symlink", f"{key} leads outside {root} (a symbolic link); not read"
        )

    def _valid_key(self, key: object) -> bool:
        if not isinstance(key, str) or not key or "\x00" in key or _undecodable(key):
            return False
        parts = key.split("/")
        return all(p not in ("", ".", "..") for p in parts) and bool(self._pattern.search(key))

    def read(self, key: str) -> str:
        """The text of ``key`` (UTF-8, invalid bytes replaced).

        Raises
        ------
        KeyError
            Not a key of this scope, or gone.
        rowvoi.corpus._confine.Refused
            (a ``PermissionError``) It is now a symbolic link leading out
            of the root, or not a regular file.
        """
        if not self._valid_key(key):
            raise KeyError(key)
        try:
            fd, _ = self._open(key)
        except FileNotFoundError:
            raise KeyError(key) from None
        return _confine.read_fd(fd).decode("utf-8", "replace")

    def read_items(self) -> Iterator[tuple[str, str]]:
        """``(key, text)`` for each key of a fresh walk, in order; a key
        refused or gone when it is read is left out (and recorded in
        :attr:`last_scan` under its reason)."""
        scan = self.scan()
        self._keys = list(scan.keys)
        for key in scan.keys:
            try:
                text = self.read(key)
            except KeyError:
                continue  # gone since the walk: not in the source
            except _confine.Refused as r:
                scan.excluded["symlink" if r.reason == "symlink" else "special"].append(key)
                continue
            except PermissionError:
                scan.excluded["unreadable"].append(key)
                continue
            yield key, text

    # ---------------------------------------------------------- mapping
    def keys_list(self) -> list[str]:
        """The relative paths, scanned now."""
        self._keys = self.scan().keys
        return self._keys

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys_list())

    def __len__(self) -> int:
        return len(self.keys_list())

    def __contains__(self, key: object) -> bool:
        if not self._valid_key(key):
            return False
        assert isinstance(key, str)
        try:
            fd, _ = self._open(key)
        except OSError:
            return False
        os.close(fd)
        return True

    def __getitem__(self, key: str) -> str:
        try:
            return self.read(key)
        except _confine.Refused:
            raise KeyError(key) from None

    def path(self, key: str) -> Path:
        """The absolute path of a key."""
        return self.root / key


def _dir_id(st: os.stat_result) -> tuple[int, int]:
    return (st.st_dev, st.st_ino)


def from_files(
    root: str | os.PathLike[str],
    *,
    name: str | None = None,
    pattern: str = DFLT_FILE_PATTERN,
    exclude: Iterable[str] | None = None,
    strategy: Any = None,
    follow_symlinks: bool = False,
    **kwargs: Any,
) -> CorpusSource:
    """A folder of text files as a corpus (lazy: files are read when the
    build asks for them).

    Parameters
    ----------
    root : path
        The folder; artifact ids are file paths relative to it.
    name : str, optional
        Corpus name (default: none).
    pattern : str
        Regular expression searched in each relative path (default
        :data:`DFLT_FILE_PATTERN`: ``.md .markdown .txt .rst``).
    exclude : iterable of str, optional
        Directory names to skip (default :data:`DFLT_EXCLUDE_DIRS`).
    strategy : IndexingStrategy, optional
        Default :class:`~rowvoi.corpus.indexing.strategy.WholeText`.
    follow_symlinks : bool
        Also index what symbolic links lead to outside ``root`` (files and
        folders; default False: such links are skipped and reported). See
        :class:`FileScope` for what is read and what is refused: only
        regular files, never a FIFO, socket or device; names that are not
        UTF-8 are skipped with a :class:`SkippedFileWarning`.

    Each artifact's filter fields are ``path`` (absolute: the disclosure
    pointer), ``name`` (the relative path) and ``suffix`` (``".md"``).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "a.md").write_text("Lift"); _ = (d / "b.png").write_bytes(b"\\x00")
    >>> [aid for aid, _ in from_files(d).items()]
    ['a.md']
    """
    scope = FileScope(root, pattern, exclude, follow_symlinks=follow_symlinks)

    def metadata_of(artifact_id: str, raw: Any) -> dict[str, Any]:
        p = scope.path(artifact_id)
        return {"path": str(p), "name": artifact_id, "suffix": p.suffix}

    spec: dict[str, Any] = {"kind": "files", "root": str(scope.root), "pattern": pattern}
    if exclude is not None:
        spec["exclude"] = sorted(scope.exclude)
    if follow_symlinks:
        spec["follow_symlinks"] = True
    return CorpusSource(name, scope, strategy, metadata_of=metadata_of, spec=spec, **kwargs)


# ----------------------------------------------------------------- records


def resolve_fetcher(fetcher: Any) -> Callable[[], Any]:
    """A zero-argument callable returning records, from a callable or an
    import reference.

    A string is ``"package.module:attribute"`` (or
    ``"package.module.attribute"``): the module is **imported, which runs
    its code** -- name only modules you trust. Dotted attributes
    (``"pkg.mod:Class.method"``) are followed.

    Raises
    ------
    ValueError
        The reference does not name an importable attribute; the message
        says which part failed.
    TypeError
        ``fetcher`` is neither a callable nor a string, or names something
        that is not callable.

    Examples
    --------
    >>> resolve_fetcher(lambda: [])()
    []
    >>> resolve_fetcher("rowvoi.corpus.indexing.sources:DFLT_EXCLUDE_DIRS")
    Traceback (most recent call last):
    ...
    TypeError: fetcher 'rowvoi.corpus.indexing.sources:DFLT_EXCLUDE_DIRS' names a frozenset, not a callable
    """
    if callable(fetcher):
        given: Callable[[], Any] = fetcher
        return given
    if not isinstance(fetcher, str) or not fetcher:
        raise TypeError(f"fetcher must be a callable or a 'module:attr' string, not {fetcher!r}")
    if ":" in fetcher:
        mod_name, _, attr = fetcher.partition(":")
    else:
        mod_name, _, attr = fetcher.rpartition(".")
    if not mod_name or not attr:
        raise ValueError(f"fetcher {fetcher!r}: expected 'package.module:attribute'")
    try:
        obj: Any = importlib.import_module(mod_name)
    except ImportError as exc:
        raise ValueError(
            f"fetcher {fetcher!r}: cannot import module {mod_name!r} ({exc})"
        ) from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ValueError(
                f"fetcher {fetcher!r}: {mod_name!r} has no attribute {attr!r}"
            ) from None
    if not callable(obj):
        raise TypeError(f"fetcher {fetcher!r} names a {type(obj).__name__}, not a callable")
    found: Callable[[], Any] = obj
    return found


class _Records(Mapping[str, Any]):
    """Records fetched once, on first access, keyed by their id field."""

    def __init__(self, fetch: Callable[[], Any], id_key: str) -> None:
        self._fetch = fetch
        self._id_key = id_key
        self._data: dict[str, Any] | None = None

    def _load(self) -> dict[str, Any]:
        if self._data is None:
            data: dict[str, Any] = {}
            for i, rec in enumerate(self._fetch()):
                if not isinstance(rec, Mapping):
                    raise TypeError(f"record {i} is a {type(rec).__name__}, not a mapping")
                if self._id_key not in rec or _missing(rec[self._id_key]):
                    raise ValueError(
                        f"record {i} has no {self._id_key!r} (the id key); every "
                        "record needs an id"
                    )
                key = _id_text(rec[self._id_key])
                if key in data:
                    raise ValueError(f"record {i}: id {key!r} is repeated; ids must be unique")
                data[key] = rec
            self._data = data
        return self._data

    def __getitem__(self, key: str) -> Any:
        return self._load()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _id_text(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):
        v = v.item()
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return ledger_key(v if isinstance(v, (str, numbers.Integral)) else str(v))


def from_records(
    *,
    name: str | None,
    fetcher: Any,
    strategy: Any = None,
    metadata_keys: Sequence[str] | None = None,
    id_key: str = "id",
    text_key: str = "text",
    **kwargs: Any,
) -> CorpusSource:
    """Records produced by a function as a corpus.

    Parameters
    ----------
    name : str or None
    fetcher : callable or str
        ``() -> iterable of mappings``, or a ``"module:attr"`` reference to
        one (see :func:`resolve_fetcher`: importing runs code). Called once
        per build.
    strategy : IndexingStrategy, optional
        Default ``Chunked(text_key=text_key)``.
    metadata_keys : sequence of str, optional
        Record fields lifted into filter fields (missing ones are ``None``).
    id_key, text_key : str
        The id field (ids must be present and unique) and the text field.

    Raises
    ------
    ValueError
        At the build: a record without an id, a repeated id.

    Examples
    --------
    >>> src = from_records(name="n", fetcher=lambda: [{"id": 7, "text": "Lift"}])
    >>> [(aid, raw["text"]) for aid, raw in src.items()]
    [('7', 'Lift')]
    """
    fetch = resolve_fetcher(fetcher)
    keys = _check_keys(metadata_keys)
    if strategy is None:
        strategy = Chunked(text_key=text_key)

    def metadata_of(artifact_id: str, raw: Any) -> dict[str, Any]:
        return {k: raw.get(k) for k in keys}

    spec = None
    if isinstance(fetcher, str):
        spec = {
            "kind": "records",
            "fetcher": fetcher,
            "id_key": id_key,
            "text_key": text_key,
            "metadata_keys": list(keys),
        }
    spec = kwargs.pop("spec", spec)
    return CorpusSource(
        name,
        _Records(fetch, id_key),
        strategy,
        metadata_of=metadata_of if keys else None,
        spec=spec,
        **kwargs,
    )


def _check_keys(keys: Sequence[str] | None) -> tuple[str, ...]:
    if keys is None:
        return ()
    if isinstance(keys, str):
        raise TypeError("metadata_keys must be a list of field names, not one str")
    keys = tuple(keys)
    for k in keys:
        if not isinstance(k, str) or not k:
            raise TypeError(f"metadata_keys holds {k!r}, not a field name")
    return keys


def read_records(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The records of a JSON Lines (``.jsonl``/``.ndjson``), JSON (a list of
    objects), CSV or Parquet file, as dicts (missing CSV/Parquet cells are
    ``None``).

    Raises
    ------
    FileNotFoundError
        No such file.
    ValueError
        Not a regular file (a FIFO, a device), an unknown extension, a
        line that is not a JSON object (named by number), a table that
        cannot be read.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "r.csv"
    >>> _ = f.write_text("id,text,year\\n1,Lift,1962\\n2,Drag,\\n")
    >>> read_records(f)
    [{'id': 1, 'text': 'Lift', 'year': 1962.0}, {'id': 2, 'text': 'Drag', 'year': None}]
    """
    p = Path(path)
    if not p.is_file():
        if p.exists():  # a FIFO, a device, a folder: never opened (a FIFO would block)
            raise ValueError(f"{p}: not a regular file; a records file is a plain file")
        raise FileNotFoundError(f"{p}: no such file")
    suffix = p.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        out = []
        with open(p, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{p}:{n}: not valid JSON ({exc.msg})") from None
                if not isinstance(rec, dict):
                    raise ValueError(f"{p}:{n}: a record must be a JSON object")
                out.append(rec)
        return out
    if suffix == ".json":
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{p}: not valid JSON ({exc.msg})") from None
        if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
            raise ValueError(f"{p}: expected a JSON list of objects")
        return data
    if suffix in (".csv", ".parquet", ".pq"):
        import pandas as pd

        try:
            df = pd.read_csv(p) if suffix == ".csv" else pd.read_parquet(p)
        except ImportError as exc:
            raise ValueError(
                f"{p}: reading Parquet needs pyarrow: pip install 'rowvoi[parquet]' ({exc})"
            ) from None
        except Exception as exc:  # noqa: BLE001 - any parse failure is a data error
            raise ValueError(f"{p}: cannot read the table: {exc}") from None
        return _frame_records(df)
    raise ValueError(f"{p}: records files are .jsonl, .ndjson, .json, .csv or .parquet")


def _frame_records(df: Any) -> list[dict[str, Any]]:
    import pandas as pd

    cols = [str(c) for c in df.columns]
    out = []
    for row in df.itertuples(index=False, name=None):
        rec = {}
        for c, v in zip(cols, row):
            if v is not None and not isinstance(v, (list, dict, str)) and pd.isna(v):
                v = None
            elif isinstance(v, pd.Timestamp):
                v = v.to_pydatetime()
            elif hasattr(v, "item") and not isinstance(v, (str, bytes)):
                v = v.item()
            rec[c] = v
        out.append(rec)
    return out


class _FileFetcher:
    """A fetcher reading a records file at each build (picklable)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __call__(self) -> list[dict[str, Any]]:
        return read_records(self.path)


def from_records_file(
    path: str | os.PathLike[str],
    *,
    name: str | None,
    id_key: str = "id",
    text_key: str = "text",
    metadata_keys: Sequence[str] | None = None,
    strategy: Any = None,
    **kwargs: Any,
) -> CorpusSource:
    """A records file (see :func:`read_records`) as a corpus, re-read at
    each build.

    >>> import json, tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "notes.jsonl"
    >>> _ = f.write_text(json.dumps({"id": "n1", "text": "Lift", "year": 1962}) + "\\n")
    >>> src = from_records_file(f, name="notes", metadata_keys=["year"])
    >>> [(aid, raw["text"]) for aid, raw in src.items()]
    [('n1', 'Lift')]
    """
    p = Path(path).expanduser().resolve()
    keys = _check_keys(metadata_keys)
    spec = {
        "kind": "records",
        "path": str(p),
        "id_key": id_key,
        "text_key": text_key,
        "metadata_keys": list(keys),
    }
    return from_records(
        name=name,
        fetcher=_FileFetcher(p),
        strategy=strategy,
        metadata_keys=keys,
        id_key=id_key,
        text_key=text_key,
        spec=spec,
        **kwargs,
    )


def from_dataframe(
    df: Any,
    *,
    name: str | None,
    text_column: str = "text",
    id_column: str | None = None,
    metadata_columns: Sequence[str] | None = None,
    strategy: Any = None,
    **kwargs: Any,
) -> CorpusSource:
    """A pandas DataFrame as a corpus: one artifact per row.

    Parameters
    ----------
    df : pandas.DataFrame
    name : str or None
    text_column : str
        The text (default ``"text"``); with a :class:`Fields` strategy the
        fields name columns instead.
    id_column : str, optional
        The id column (default: the row index).
    metadata_columns : sequence of str, optional
        Columns lifted into filter fields, typed from their dtypes
        (numbers numeric, datetimes date, ``category`` categorical, strings
        text) unless ``filter_types`` says otherwise.
    strategy : IndexingStrategy, optional
        Default ``Chunked(text_key=text_column)``.

    Raises
    ------
    ValueError
        A named column is missing, or the ids repeat.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"text": ["Lift", "Drag"], "year": [1962, 1970]}, index=["a", "b"])
    >>> src = from_dataframe(df, name="p", metadata_columns=["year"])
    >>> [(aid, src.metadata_of(aid, raw)) for aid, raw in src.items()]
    [('a', {'year': 1962}), ('b', {'year': 1970})]
    >>> src.filter_types
    {'year': 'numeric'}
    """
    import pandas as pd

    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame, not {type(df).__name__}")
    keys = _check_keys(metadata_columns)
    strat = Chunked(text_key=text_column) if strategy is None else strategy
    needed = list(keys) + ([] if strategy is not None else [text_column])
    if id_column is not None:
        needed.append(id_column)
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise ValueError(
            f"the DataFrame has no column {', '.join(map(repr, missing))}; its "
            f"columns: {', '.join(map(str, df.columns))}"
        )
    types: dict[str, str] = {}
    for c in keys:
        kind = df[c].dtype
        if isinstance(kind, pd.CategoricalDtype):
            types[c] = "categorical"
        elif pd.api.types.is_bool_dtype(kind) or pd.api.types.is_numeric_dtype(kind):
            types[c] = "numeric"
        elif pd.api.types.is_datetime64_any_dtype(kind):
            types[c] = "date"
    types.update(kwargs.pop("filter_types", None) or {})
    frame = df.reset_index(drop=id_column is not None)
    id_col = id_column if id_column is not None else frame.columns[0]
    records = _frame_records(frame)

    def fetch() -> list[dict[str, Any]]:
        return records

    src = from_records(
        name=name,
        fetcher=fetch,
        strategy=strat,
        metadata_keys=keys,
        id_key=str(id_col),
        text_key=text_column,
        filter_types=types,
        **kwargs,
    )
    return src
