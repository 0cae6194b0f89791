"""Disclose: hand back the payload of each selected hit, at a chosen depth.

:func:`disclose` turns a :class:`~rowvoi.corpus.retrieval.selection.Selection` into one
:class:`Disclosure` per committed hit, best first, at one of three levels:

``"metadata"``
    No read: the matched surface (``summary``), the hit's metadata and its
    pointer (which is resolved, to check it against the allowed roots).
``"body"``
    Also the pointer's contents (``body``): the file behind
    ``metadata["skill_path"]`` or ``metadata["path"]``
    (:data:`~rowvoi.corpus.base.POINTER_KEYS`), or whatever a ``loader`` or
    a ``store`` returns for it.
``"bundled"``
    Reserved for bodies with attachments; today the same as ``"body"``.

Independently of the level, ``expand=`` (a neighbourhood policy, see
:mod:`rowvoi.corpus.retrieval.expansion`) adds a ``passage`` stitched from the corpus's
stored records.

Disclosure is a pure read: the selection and its hits are never modified,
and a pointer that cannot be read never raises -- the disclosure gets
``body=None`` and a note in ``metadata["disclosure"]`` saying why (an
impossible expansion likewise leaves ``passage=None`` and a note in
``metadata["expansion"]``). A pointer no file can have (a NUL byte, a
lone surrogate) is such a pointer.

The root guard
--------------
Pointers come from the indexed data, so a document could point anywhere
(``../../etc/passwd``, a symlink to ``~/.ssh``). The default loader reads a
pointer only if it resolves -- after ``..`` and every symbolic link -- to a
regular file inside one of the *allowed roots*. Those come from the caller,
never from the corpus's own files (a corpus received from elsewhere could
name ``/`` there): ``roots=`` when given, else those of the hit's corpus --
the one given as ``corpus=``, else the named corpus of the hit's
``source`` -- which are, for a corpus built in this process from
:func:`~rowvoi.corpus.from_files`, that folder, and for a named corpus, the
``root`` of its entry in the registry (:mod:`rowvoi.corpus.maintenance.registry`,
written by ``rowvoi build NAME --files`` and ``rowvoi register``; see
:func:`allowed_roots`). A pointer outside them, or a hit whose roots are
unknown, is refused with a note. Relative pointers are resolved against the
roots in order. The resolved path is opened one folder at a time from the
root, each without following a symbolic link, with ``O_NONBLOCK``, and the
file is ``fstat``-ed before a byte is read, so a file or folder swapped for
a link, a FIFO or a device after the check is refused too, and nothing
blocks. At most :data:`MAX_BODY_BYTES` bytes are read (a longer body is
cut, with a note); bodies are decoded as UTF-8 (undecodable bytes
replaced).

The summary is guarded the same way: when the allowed roots are known and
a hit's pointer does not resolve inside them, the disclosure carries
neither body nor summary (``summary=""``, at every level), with the note --
text indexed from outside the roots (by an older version, or a corpus
built with ``follow_symlinks=True``) is not handed on. With a ``loader`` or
a ``store``, pointers are theirs to resolve and no root applies.

Thread-safety: :func:`disclose` is safe to call from many threads; it reads
files and the corpus store, and a custom ``loader``/``store`` must be
thread-safe itself if shared.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import rowvoi.corpus._confine as _confine
from rowvoi.corpus.base import SearchHit, plain
from rowvoi.corpus.retrieval.expansion import NeighborhoodPolicy, SeedNotFound, expand as _expand
from rowvoi.corpus.retrieval.selection import Selection
from rowvoi.corpus.storage import registry_file
from rowvoi.corpus.storage.paths import corpus_dir
from rowvoi.corpus.storage.store import CorpusStore

__all__ = [
    "Disclosure",
    "disclose",
    "read_pointer",
    "allowed_roots",
    "pointer_inside",
    "PointerRefused",
    "BodyLoader",
    "ResourceStore",
    "DISCLOSURE_LEVELS",
    "MAX_BODY_BYTES",
]

#: Disclosure levels, cheapest first.
DISCLOSURE_LEVELS = ("metadata", "body", "bundled")
#: The most bytes the default loader reads from one pointer.
MAX_BODY_BYTES = 4 << 20

#: ``metadata -> text or None``: a body resolver of your own.
BodyLoader = Callable[[Mapping[str, Any]], "str | None"]
#: ``pointer -> payload``: any mapping (a dict, a blob store, a URL map).
ResourceStore = Mapping[str, Any]


class PointerRefused(PermissionError):
    """A pointer resolves outside the allowed roots, or to something other
    than a regular file. :func:`disclose` turns it into a note; only
    :func:`read_pointer` raises it."""


@dataclass(frozen=True)
class Disclosure:
    """The payload of one selected hit.

    Attributes
    ----------
    artifact_id : str
    level : str
        ``"metadata"``, ``"body"`` or ``"bundled"``.
    name : str
        The hit's ``metadata["name"]`` when it is a non-empty string, else
        the artifact id.
    score : float
        The selecting hit's score.
    summary : str
        The matched surface's text (no read); ``""`` when the hit's
        pointer leads outside the allowed roots (see the module notes).
    body : str or None
        The pointer's contents; None below ``"body"`` or when unreadable.
    pointer : str or None
        The hit's pointer (:attr:`SearchHit.pointer`).
    metadata : dict
        The hit's metadata, plus a ``"disclosure"`` note when a pointer
        could not be read (or leads outside the allowed roots) and an
        ``"expansion"`` note when an expansion was asked for but not
        possible.
    source : str or None
        The corpus the hit came from (tells apart equal ids of two corpora).
    passage : str or None
        The expanded neighbourhood (``disclose(..., expand=...)``).

    Examples
    --------
    >>> d = Disclosure("a", "metadata", "a", 0.5, "matched text")
    >>> sorted(d.to_dict())[:4]
    ['artifact_id', 'body', 'level', 'metadata']
    """

    artifact_id: str
    level: str
    name: str
    score: float
    summary: str
    body: str | None = None
    pointer: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    source: str | None = None
    passage: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python form for JSON (``score`` a float, no numpy)."""
        return {
            "artifact_id": self.artifact_id,
            "level": self.level,
            "name": self.name,
            "score": float(self.score),
            "summary": self.summary,
            "body": self.body,
            "pointer": self.pointer,
            "metadata": plain(dict(self.metadata)),
            "source": self.source,
            "passage": self.passage,
        }


# ------------------------------------------------------------ root guard
def allowed_roots(corpus: Any) -> tuple[str, ...]:
    """The directories whose files a corpus's pointers may name -- from the
    caller's side only, never from the corpus's own files.

    * A corpus :func:`~rowvoi.corpus.build` returned in this process: for a
      :func:`~rowvoi.corpus.from_files` source, that folder
      (``Corpus.source_roots``); for another source, none.
    * A corpus name, or a corpus (or store) opened by name in the corpora
      folder: the ``root`` of its ``files`` entry in the registry
      (:mod:`rowvoi.corpus.maintenance.registry`); none when it is not registered, or
      not a files corpus.

    Anything else allows none: pass ``roots=`` to :func:`disclose`.

    Parameters
    ----------
    corpus : Corpus, CorpusStore or str

    Raises
    ------
    ValueError
        The registry file is malformed (:func:`disclose` turns it into a
        note).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from rowvoi.corpus import CorpusStore, build, from_files, from_mapping
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "a.md").write_text("Lift")
    >>> notes = build(from_files(d, embedder="hashing"), store=CorpusStore.memory())
    >>> allowed_roots(notes) == (str(d.resolve()),)
    True
    >>> allowed_roots(build(from_mapping({"a": "x"}, embedder="hashing"),
    ...                     store=CorpusStore.memory()))
    ()
    >>> allowed_roots(notes.store)  # a bare store: no caller said anything
    ()
    """
    roots = getattr(corpus, "source_roots", None)
    if isinstance(roots, tuple):
        return tuple(str(r) for r in roots)
    if isinstance(corpus, str):
        name: Any = corpus
        path = None
    else:
        store = corpus if isinstance(corpus, CorpusStore) else getattr(corpus, "store", None)
        if not isinstance(store, CorpusStore):
            return ()
        name = getattr(corpus, "name", None) or store.name
        path = store.path
    if not isinstance(name, str) or not name:
        return ()
    try:
        home = corpus_dir(name)
    except ValueError:  # not a corpus name: nothing is registered under it
        return ()
    if path is not None and os.path.realpath(path) != os.path.realpath(home):
        return ()  # a store elsewhere is not the registered corpus of that name
    entry = registry_file.get(name)
    if entry and entry.get("kind") == "files" and isinstance(entry.get("root"), str):
        return (entry["root"],)
    return ()


def _outside_note(pointer: str, real_roots: Sequence[str]) -> str:
    return (
        f"pointer {pointer!r} resolves outside the allowed roots "
        f"({', '.join(real_roots)}); not read"
    )


def read_pointer(
    pointer: str, roots: Iterable[str | os.PathLike[str]], *, max_bytes: int = MAX_BODY_BYTES
) -> tuple[str, bool]:
    """Read the file a pointer names, if it lies inside one of ``roots``.

    Parameters
    ----------
    pointer : str
        An absolute path, or a path relative to the roots (tried in order).
    roots : iterable of path
        The allowed directories. Symbolic links in them are resolved first.
    max_bytes : int
        Read at most this many bytes.

    Returns
    -------
    (str, bool)
        The text (UTF-8, undecodable bytes replaced) and whether it was
        cut at ``max_bytes``.

    Raises
    ------
    PointerRefused
        No roots; the pointer resolves outside every root (through ``..``
        or a symbolic link, before or during the open); it is not a regular
        file.
    OSError
        The file inside the roots cannot be opened or read (missing,
        unreadable).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "a.md").write_text("hello")
    >>> read_pointer("a.md", [root])
    ('hello', False)
    >>> read_pointer("../a.md", [root / "sub"])
    Traceback (most recent call last):
    ...
    rowvoi.corpus.retrieval.disclosure.PointerRefused: pointer '../a.md' resolves outside the allowed roots (...); not read
    """
    try:
        _confine.check_text_path(pointer)
    except _confine.Refused as exc:
        raise PointerRefused(f"pointer {exc}") from None
    real_roots = [os.path.realpath(os.fspath(r)) for r in roots]
    if not real_roots:
        raise PointerRefused(
            f"pointer {pointer!r}: no allowed roots are known for this "
            "corpus, so nothing is read; pass roots= to disclose (or register "
            "the corpus: rowvoi register NAME --files FOLDER)"
        )
    missing: OSError | None = None
    for cand in _candidates(pointer, real_roots):
        for root in real_roots:
            rel = _confine.resolve_inside(cand, root)
            if rel is None:
                continue
            try:
                fd, _ = _confine.open_beneath(root, rel)
            except FileNotFoundError as exc:
                missing = exc
                break
            except _confine.Refused as exc:
                raise PointerRefused(f"pointer {pointer!r}: {exc}") from None
            data = _confine.read_fd(fd, max_bytes + 1)
            cut = len(data) > max_bytes
            return data[:max_bytes].decode("utf-8", "replace"), cut
    if missing is not None:
        raise missing
    raise PointerRefused(_outside_note(pointer, real_roots))


def _candidates(pointer: str, real_roots: Sequence[str]) -> list[str]:
    if os.path.isabs(pointer):
        return [pointer]
    return [os.path.join(r, pointer) for r in real_roots]


def pointer_inside(pointer: object, roots: Iterable[str | os.PathLike[str]]) -> bool:
    """Does ``pointer`` resolve (``..`` and symbolic links) inside one of
    ``roots``, as :func:`read_pointer` would resolve it? Reads nothing;
    False for a pointer no file can have.

    >>> pointer_inside("/etc/passwd", ["/usr"]), pointer_inside("a\\x00", ["/"])
    (False, False)
    >>> pointer_inside("bin/../lib", ["/usr"])
    True
    """
    try:
        _confine.check_text_path(pointer)
    except _confine.Refused:
        return False
    assert isinstance(pointer, str)
    real_roots = []
    for r in roots:
        try:
            real_roots.append(os.path.realpath(_confine.check_text_path(os.fspath(r))))
        except (_confine.Refused, TypeError):
            continue  # a root no folder can have allows nothing
    return any(
        _confine.resolve_inside(c, r) is not None
        for c in _candidates(pointer, real_roots)
        for r in real_roots
    )


# ---------------------------------------------------------------- loading
def _by_source(corpus: Any, hit: SearchHit) -> Any:
    """The corpus object for ``hit``: the mapping entry of its source, or
    ``corpus`` itself."""
    if isinstance(corpus, Mapping):
        return corpus.get(hit.source)
    return corpus


def _roots_for(
    hit: SearchHit, roots: Sequence[str] | None, corpus: Any, cache: dict[Any, Any]
) -> tuple[Sequence[str], str | None]:
    """``(allowed roots, note)`` of one hit's pointer: ``roots`` when
    given, else its corpus's (:func:`allowed_roots`, once per corpus per
    call); a note when they could not be read (then none)."""
    if roots is not None:
        return roots, None
    owner = _by_source(corpus, hit) if corpus is not None else hit.source
    key = owner if isinstance(owner, str) or owner is None else id(owner)
    if key not in cache:
        try:
            cache[key] = (allowed_roots(owner), None)
        except (OSError, ValueError) as exc:  # e.g. a malformed registry
            cache[key] = ((), f"the allowed roots of its corpus could not be read ({exc})")
    found: tuple[Sequence[str], str | None] = cache[key]
    return found


def _summary_note(pointer: str, allowed: Sequence[str]) -> str | None:
    """None when ``pointer`` resolves inside ``allowed`` (non-empty), else
    why neither body nor summary is disclosed."""
    if pointer_inside(pointer, allowed):
        return None
    try:
        _confine.check_text_path(pointer)
    except _confine.Refused as exc:
        why = f"pointer {exc}"
    else:
        why = _outside_note(
            pointer, [repr(r) if "\x00" in r else os.path.realpath(r) for r in allowed]
        )
    return why.removesuffix("; not read") + "; neither its body nor its summary is disclosed"


def _load_body(
    hit: SearchHit,
    *,
    loader: BodyLoader | None,
    store: ResourceStore | None,
    allowed: Sequence[str],
    roots_note: str | None,
) -> tuple[str | None, str | None]:
    """``(body, note)`` for one hit; never raises for a bad pointer."""
    if loader is not None:
        try:
            body = loader(hit.metadata)
        except Exception as exc:  # noqa: BLE001 - a disclosure never fails
            return None, f"the loader failed: {type(exc).__name__}: {exc}"
        if body is None or isinstance(body, str):
            return body, None
        return None, f"the loader returned {type(body).__name__}, not text"
    pointer = hit.pointer
    if pointer is None:
        return None, None
    if store is not None:
        try:
            payload = store[pointer]
        except KeyError:
            return None, f"pointer {pointer!r} is not in the store"
        except Exception as exc:  # noqa: BLE001
            return None, f"the store failed on {pointer!r}: {type(exc).__name__}: {exc}"
        if isinstance(payload, bytes):
            return payload.decode("utf-8", "replace"), None
        if isinstance(payload, str):
            return payload, None
        return None, f"the store holds {type(payload).__name__} for {pointer!r}, not text"
    if roots_note is not None:
        return None, f"pointer {pointer!r}: {roots_note}; not read"
    try:
        body, cut = read_pointer(pointer, allowed)
    except PointerRefused as exc:
        return None, str(exc)
    except OSError as exc:
        return None, (
            f"pointer {pointer!r} could not be read "
            f"({exc.strerror or type(exc).__name__}); it may be stale"
        )
    except (ValueError, TypeError) as exc:  # a root no path can have
        return None, f"pointer {pointer!r} could not be read ({exc}); not read"
    note = f"body cut at {MAX_BODY_BYTES} bytes" if cut else None
    return body, note


def _passage(
    hit: SearchHit, policy: NeighborhoodPolicy, corpus: Any
) -> tuple[str | None, str | None]:
    target = _by_source(corpus, hit)
    if target is None:
        return None, f"no corpus given for source {hit.source!r}"
    try:
        return _expand(hit, target, policy=policy).text, None
    except SeedNotFound as exc:
        return None, str(exc)
    except KeyError as exc:
        return None, str(exc.args[0]) if exc.args else "no ledger entry"
    except ValueError as exc:
        return None, str(exc)


def _name(hit: SearchHit) -> str:
    n = hit.metadata.get("name")
    return n if isinstance(n, str) and n else str(hit.artifact_id)


def disclose(
    selection: Selection,
    *,
    level: str = "body",
    loader: BodyLoader | None = None,
    store: ResourceStore | None = None,
    expand: NeighborhoodPolicy | None = None,
    corpus: Any = None,
    roots: Iterable[str | os.PathLike[str]] | None = None,
) -> list[Disclosure]:
    """One :class:`Disclosure` per selected hit, best first.

    Parameters
    ----------
    selection : Selection
        What :func:`rowvoi.corpus.select` committed to.
    level : {"body", "metadata", "bundled"}
        How much to load (see the module docstring).
    loader : callable or None
        ``metadata -> text or None``, replacing the file reader. An
        exception it raises becomes a note.
    store : Mapping or None
        ``pointer -> payload`` (text or UTF-8 bytes) instead of the disk.
        Exclusive with ``loader``.
    expand : NeighborhoodPolicy or None
        Also stitch a ``passage`` from the stored records (needs
        ``corpus``); works at every level.
    corpus : corpus, name, or Mapping[str, corpus]
        Where hits' records live (for ``expand``) and whose allowed roots
        bound the file reader; a mapping ``{source: corpus}`` for a
        selection over several corpora.
    roots : iterable of path or None
        Allowed roots for every hit, overriding the corpora's.

    Returns
    -------
    list[Disclosure]

    Raises
    ------
    ValueError
        An unknown level; both ``loader`` and ``store``; ``expand``
        without ``corpus``.
    TypeError
        ``selection`` is not a :class:`Selection`.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from rowvoi.corpus.base import SearchHit
    >>> from rowvoi.corpus.retrieval.selection import select
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "a.md").write_text("# A\\nthe whole file")
    >>> hits = [SearchHit("a", "chunk", 0.9, "the whole", {"path": str(root / "a.md")}),
    ...         SearchHit("b", "chunk", 0.85, "elsewhere", {"path": "/etc/hostname"})]
    >>> a, b = disclose(select(hits), roots=[root])
    >>> a.body
    '# A\\nthe whole file'
    >>> b.body, b.summary, "outside the allowed roots" in b.metadata["disclosure"]
    (None, '', True)
    """
    if not isinstance(selection, Selection):
        raise TypeError(
            f"disclose needs a Selection (from select()), got {type(selection).__name__}"
        )
    if level not in DISCLOSURE_LEVELS:
        raise ValueError(
            f"unknown disclosure level {level!r}; use one of {', '.join(DISCLOSURE_LEVELS)}"
        )
    if loader is not None and store is not None:
        raise ValueError("pass loader= or store=, not both: each resolves the body")
    if loader is not None and not callable(loader):
        raise TypeError("loader must be a callable metadata -> text or None")
    if store is not None and not isinstance(store, Mapping):
        raise TypeError("store must be a mapping pointer -> payload")
    if expand is not None and corpus is None:
        raise ValueError("expand= reads the corpus's stored records: pass corpus= too")
    root_list = None if roots is None else [os.fspath(r) for r in roots]
    cache: dict[Any, Any] = {}
    out: list[Disclosure] = []
    for hit in selection.selected:
        meta = dict(hit.metadata)
        body = None
        summary = hit.text
        note = None
        pointer = hit.pointer
        on_disk = loader is None and store is None and pointer is not None
        allowed: Sequence[str] = ()
        roots_note = None
        if on_disk:
            allowed, roots_note = _roots_for(hit, root_list, corpus, cache)
        if on_disk and allowed and pointer is not None:
            note = _summary_note(pointer, allowed)
            if note is not None:
                summary = ""
        if note is None and level != "metadata":
            body, note = _load_body(
                hit, loader=loader, store=store, allowed=allowed, roots_note=roots_note
            )
        if note is not None:
            meta["disclosure"] = note
        passage = None
        if expand is not None:
            passage, note = _passage(hit, expand, corpus)
            if note is not None:
                meta["expansion"] = note
        out.append(
            Disclosure(
                hit.artifact_id,
                level,
                _name(hit),
                hit.score,
                summary,
                body,
                hit.pointer,
                meta,
                hit.source,
                passage,
            )
        )
    return out
