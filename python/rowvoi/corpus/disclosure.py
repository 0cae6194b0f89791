"""Disclose: hand back the payload of each selected hit, at a chosen depth.

:func:`disclose` turns a :class:`~rowvoi.corpus.selection.Selection` into one
:class:`Disclosure` per committed hit, best first, at one of three levels:

``"metadata"``
    No I/O: the matched surface (``summary``), the hit's metadata and its
    pointer.
``"body"``
    Also the pointer's contents (``body``): the file behind
    ``metadata["skill_path"]`` or ``metadata["path"]``
    (:data:`~rowvoi.corpus.base.POINTER_KEYS`), or whatever a ``loader`` or
    a ``store`` returns for it.
``"bundled"``
    Reserved for bodies with attachments; today the same as ``"body"``.

Independently of the level, ``expand=`` (a neighbourhood policy, see
:mod:`rowvoi.corpus.expansion`) adds a ``passage`` stitched from the corpus's
stored records.

Disclosure is a pure read: the selection and its hits are never modified,
and a pointer that cannot be read never raises -- the disclosure gets
``body=None`` and a note in ``metadata["disclosure"]`` saying why (an
impossible expansion likewise leaves ``passage=None`` and a note in
``metadata["expansion"]``).

The root guard
--------------
Pointers come from the indexed data, so a document could point anywhere
(``../../etc/passwd``, a symlink to ``~/.ssh``). The default loader reads a
pointer only if it resolves -- after ``..`` and every symbolic link -- to a
regular file inside one of the *allowed roots*: those given as ``roots=``,
else the allowed roots of the hit's corpus -- the one given as ``corpus=``,
else the named corpus of the hit's ``source`` -- which for a corpus built
from files is its root (see :func:`allowed_roots`). A pointer outside them, or a hit whose
roots are unknown, is refused with a note. Relative pointers are resolved
against the roots in order. The file is opened without following a final
symbolic link and checked again after opening, so a link swapped in between
the check and the open is refused too. At most :data:`MAX_BODY_BYTES` bytes
are read (a longer body is cut, with a note); bodies are decoded as UTF-8
(undecodable bytes replaced).

Thread-safety: :func:`disclose` is safe to call from many threads; it reads
files and the corpus store, and a custom ``loader``/``store`` must be
thread-safe itself if shared.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rowvoi.corpus.base import SearchHit, plain
from rowvoi.corpus.expansion import NeighborhoodPolicy, SeedNotFound, expand as _expand
from rowvoi.corpus.selection import Selection
from rowvoi.corpus.store import CorpusStore

__all__ = [
    "Disclosure",
    "disclose",
    "read_pointer",
    "allowed_roots",
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

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


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
        The matched surface's text (always present, no I/O).
    body : str or None
        The pointer's contents; None below ``"body"`` or when unreadable.
    pointer : str or None
        The hit's pointer (:attr:`SearchHit.pointer`).
    metadata : dict
        The hit's metadata, plus a ``"disclosure"`` note when a pointer
        could not be read and an ``"expansion"`` note when an expansion
        was asked for but not possible.
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
def _state(corpus: Any) -> Mapping[str, Any] | None:
    """The committed state of a corpus, its store or a corpus name (None
    when there is no such corpus)."""
    store = corpus if isinstance(corpus, CorpusStore) else getattr(corpus, "store", None)
    if isinstance(corpus, str):
        store = CorpusStore.local(corpus)
    if not isinstance(store, CorpusStore) or not store.exists():
        return None
    with store.snapshot() as snap:
        return dict(snap.state)


def allowed_roots(corpus: Any) -> tuple[str, ...]:
    """The directories whose files a corpus's pointers may name.

    The corpus's ``allowed_roots`` setting when it has one, else, for a
    corpus built from files (:func:`~rowvoi.corpus.from_files`), its root;
    other corpora allow none (pass ``roots=`` to :func:`disclose`).

    Parameters
    ----------
    corpus : Corpus, CorpusStore or str
        An open corpus, its store or a corpus name; anything else allows
        none.

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
    """
    state = _state(corpus)
    if state is None:
        return ()
    configured = state.get("allowed_roots")
    if isinstance(configured, list):
        return tuple(str(r) for r in configured)
    source = state.get("source")
    if isinstance(source, Mapping) and source.get("kind") == "files" and source.get("root"):
        return (str(source["root"]),)
    return ()


def _inside(path: str, root: str) -> bool:
    try:
        return os.path.commonpath([path, root]) == root
    except ValueError:  # different drives, or a mix of absolute and relative
        return False


def _fd_path(fd: int) -> str | None:
    """The path the kernel has for an open descriptor (Linux), else None."""
    link = f"/proc/self/fd/{fd}"
    try:
        return os.readlink(link)
    except OSError:
        return None


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
    rowvoi.corpus.disclosure.PointerRefused: pointer '../a.md' resolves outside the allowed roots (...); not read
    """
    real_roots = [os.path.realpath(os.fspath(r)) for r in roots]
    if not real_roots:
        raise PointerRefused(
            f"pointer {pointer!r}: no allowed roots are known for this "
            "corpus, so nothing is read; pass roots= to disclose"
        )
    if os.path.isabs(pointer):
        candidates = [pointer]
    else:
        candidates = [os.path.join(r, pointer) for r in real_roots]
    missing: OSError | None = None
    for cand in candidates:
        real = os.path.realpath(cand)
        root = next((r for r in real_roots if _inside(real, r)), None)
        if root is None:
            continue
        try:
            fd = os.open(real, os.O_RDONLY | _NOFOLLOW | _CLOEXEC | _NONBLOCK)
        except FileNotFoundError as exc:
            missing = exc
            continue
        except OSError:
            if _NOFOLLOW and os.path.islink(real):  # swapped for a link after the check
                raise PointerRefused(
                    f"pointer {pointer!r} became a symbolic link while it was opened; not read"
                ) from None
            raise
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise PointerRefused(f"pointer {pointer!r} is not a regular file; not read")
            opened = _fd_path(fd)
            if opened is not None:
                ok = _inside(os.path.realpath(opened), root)
            else:
                here = os.stat(real)
                ok = (here.st_dev, here.st_ino) == (st.st_dev, st.st_ino)
            if not ok:
                raise PointerRefused(
                    f"pointer {pointer!r} moved outside the allowed roots "
                    "while it was opened; not read"
                )
            with os.fdopen(fd, "rb", closefd=True) as f:
                fd = -1
                data = f.read(max_bytes + 1)
        finally:
            if fd >= 0:
                os.close(fd)
        cut = len(data) > max_bytes
        return data[:max_bytes].decode("utf-8", "replace"), cut
    if missing is not None:
        raise missing
    raise PointerRefused(
        f"pointer {pointer!r} resolves outside the allowed roots "
        f"({', '.join(real_roots)}); not read"
    )


# ---------------------------------------------------------------- loading
def _by_source(corpus: Any, hit: SearchHit) -> Any:
    """The corpus object for ``hit``: the mapping entry of its source, or
    ``corpus`` itself."""
    if isinstance(corpus, Mapping):
        return corpus.get(hit.source)
    return corpus


def _load_body(
    hit: SearchHit,
    *,
    loader: BodyLoader | None,
    store: ResourceStore | None,
    roots: Sequence[str] | None,
    corpus: Any,
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
    if roots is not None:
        allowed: Sequence[str] = roots
    else:
        owner = _by_source(corpus, hit) if corpus is not None else hit.source
        try:
            allowed = allowed_roots(owner)
        except (OSError, ValueError) as exc:  # the corpus is gone or unreadable
            return None, (
                f"pointer {pointer!r}: the allowed roots of its corpus could not "
                f"be read ({exc}); not read"
            )
    try:
        body, cut = read_pointer(pointer, allowed)
    except PointerRefused as exc:
        return None, str(exc)
    except OSError as exc:
        return None, (
            f"pointer {pointer!r} could not be read "
            f"({exc.strerror or type(exc).__name__}); it may be stale"
        )
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
    >>> from rowvoi.corpus.selection import select
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "a.md").write_text("# A\\nthe whole file")
    >>> hits = [SearchHit("a", "chunk", 0.9, "the whole", {"path": str(root / "a.md")}),
    ...         SearchHit("b", "chunk", 0.85, "elsewhere", {"path": "/etc/hostname"})]
    >>> a, b = disclose(select(hits), roots=[root])
    >>> a.body
    '# A\\nthe whole file'
    >>> b.body is None, "outside the allowed roots" in b.metadata["disclosure"]
    (True, True)
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
    out: list[Disclosure] = []
    for hit in selection.selected:
        meta = dict(hit.metadata)
        body = None
        if level != "metadata":
            body, note = _load_body(
                hit, loader=loader, store=store, roots=root_list, corpus=corpus
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
                hit.text,
                body,
                hit.pointer,
                meta,
                hit.source,
                passage,
            )
        )
    return out
