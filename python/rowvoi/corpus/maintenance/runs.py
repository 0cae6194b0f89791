"""Keep registered corpora fresh: policies, ``maintain``, ``coverage``.

A registered corpus (see :mod:`rowvoi.corpus.maintenance.registry`) may carry a
*maintenance policy*, stored as data in its ``corpora.json`` entry under
``"maintenance"``:

``on_source_change`` (the default for ``files`` corpora and records files)
    Rebuild when the source changed since the corpus was built. Detection is
    cheap: a files corpus compares each file's size and mtime with the ones
    seen last time and hashes only the files that differ (a touched but
    unchanged file is not a change), against the versions in the corpus's
    ledger; a records file is compared by size, mtime and SHA-256. A
    ``module:attr`` fetcher has no cheaper signal than its output: checking
    it calls it (code execution) and hashes the records.
``interval`` with a duration (``"interval:24h"``; the default for fetcher
    corpora, every 24 h)
    Rebuild when that long has passed since the last maintenance.
``manual``
    Never by ``maintain(all=True)``; only when the corpus is named.

Whatever the policy, a corpus that was never built, or whose registration
changed since it was last maintained (another embedder, strategy or
source), is rebuilt. The build itself is incremental (only what changed is
embedded), so a rebuild is cheap when little changed.

Every run also checks each built corpus's index files: each is looked at,
and loaded and verified once per file (a file unchanged since its commit
wrote it, or since a run verified it, is not loaded again). A damaged
corpus is reported (action ``"damaged"``, with the repair command; the run
exits 1) and not built; with ``force`` it is repaired first
(:func:`rowvoi.corpus.repair`: from its stored rows and embedding cache,
nothing re-embedded), then built.

:func:`maintain` is idempotent: right after a run, a second run finds
nothing to do and says so, per corpus. A run holds one lock
(``maintain.lock``, :func:`rowvoi.corpus.storage.lock.pid_lock`, the builder
lock's mechanism): a second concurrent run is refused with
:class:`MaintenanceBusy`, and the lock of a killed run is taken over.

What a run did is appended to a per-corpus JSON Lines log (timestamp,
action, reason, policy, build counts). The log and the detection state live
in ``.maintenance/`` in the corpora folder (a ``0700`` folder of ``0600``
files, as private as the corpora whose file names they list), *not* in the corpus's
``docs.sqlite``: a run that finds nothing to do must leave the corpus
untouched (the build writes nothing then, and readers' caches stay
valid), the store's schema belongs to the builder, and a log is read with
``tail`` and ``jq``. Each write replaces the file atomically (the last
:data:`MAX_LOG_ENTRIES` entries), so a crash leaves the old or the new log,
never a torn line.

No scheduler is installed: run ``rowvoi maintain --all`` from cron (see
the README, "Keep corpora fresh").

Examples
--------
>>> import os, tempfile, pathlib
>>> os.environ["ROWVOI_HOME"] = tempfile.mkdtemp()
>>> notes = pathlib.Path(tempfile.mkdtemp()); _ = (notes / "a.md").write_text("Lift")
>>> from rowvoi.corpus.maintenance.registry import register
>>> _ = register("notes", "files", root=str(notes), embedder="hashing:16")
>>> [(r.action, r.reason) for r in maintain(all=True)]
[('built', 'never built')]
>>> [(r.action, r.reason) for r in maintain(all=True)]
[('nothing to do', 'source unchanged')]
>>> _ = (notes / "b.md").write_text("Drag")
>>> [(r.action, r.reason) for r in maintain(all=True, dry_run=True)]
[('would build', 'source changed: 1 new')]
>>> del os.environ["ROWVOI_HOME"]
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import json
import os
import stat
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rowvoi._atomic import PRIVATE_FILE, atomic_write_bytes, private_dir, sha256_file
from rowvoi.corpus.base import CorpusLocked, CorpusNotFound
from rowvoi.corpus.indexing.build import build
from rowvoi.corpus.indexing.sources import FileScope, content_hash_signal
from rowvoi.corpus.maintenance import registry
from rowvoi.corpus.maintenance.policy import (
    MaintenancePolicy,
    default_policy,
    format_duration,
    policy_from_spec,
)
from rowvoi.corpus.storage import registry_file
from rowvoi.corpus.storage.damage import check_files
from rowvoi.corpus.storage.layout import base_files
from rowvoi.corpus.storage.lock import holder_text, pid_lock
from rowvoi.corpus.storage.paths import check_name, corpora_dir
from rowvoi.corpus.storage.store import CorpusStore, rebuild_advice

__all__ = [
    "MAX_LOG_ENTRIES",
    "MaintenanceBusy",
    "MaintenanceResult",
    "MaintenanceReport",
    "CoverageReport",
    "policy_for",
    "set_policy",
    "maintain",
    "maintenance_log",
    "maintenance_dir",
    "forget",
    "coverage",
]

#: Entries kept in each corpus's maintenance log.
MAX_LOG_ENTRIES = 1000
#: A file modified this close to the moment its size and mtime were recorded
#: may change again within the same mtime tick: it is always hashed.
_RACY_NS = 2_000_000_000
_STATE_VERSION = 1


class MaintenanceBusy(CorpusLocked):
    """Another live ``maintain`` run holds the maintenance lock (its pid is
    named). Wait for it to finish; a dead run's lock is taken over."""


def _entry(name: str) -> dict[str, Any]:
    entry = registry_file.get(name)
    if entry is None:
        raise CorpusNotFound(
            f"corpus {name!r} is not registered, so it cannot be maintained: "
            f"register it first (rowvoi register {name} --files FOLDER)"
        )
    return entry


def _policy_of(entry: Mapping[str, Any]) -> MaintenancePolicy:
    spec = entry.get("maintenance")
    return default_policy(entry) if spec is None else policy_from_spec(spec)


def policy_for(name: str) -> MaintenancePolicy:
    """The policy in force for the registered corpus ``name``.

    Raises
    ------
    CorpusNotFound
        ``name`` is not registered.
    """
    return _policy_of(_entry(check_name(name)))


def set_policy(name: str, spec: Any) -> MaintenancePolicy:
    """Store the maintenance policy of the registered corpus ``name`` (see
    :func:`policy_from_spec`; ``None`` restores the kind's default).

    Raises
    ------
    CorpusNotFound
        ``name`` is not registered.
    ValueError
        A malformed policy.

    Thread-safety: the registry is rewritten atomically under its lock.

    Examples
    --------
    >>> import os, tempfile
    >>> os.environ["ROWVOI_HOME"] = tempfile.mkdtemp()
    >>> from rowvoi.corpus.maintenance.registry import register, get
    >>> _ = register("p", "records", fetcher="json:loads")
    >>> set_policy("p", "interval:6h").to_spec(), get("p")["maintenance"]["every_seconds"]
    ('interval:6h', 21600.0)
    >>> del os.environ["ROWVOI_HOME"]
    """
    check_name(name)
    policy = None if spec is None else policy_from_spec(spec)
    with registry_file.edit() as doc:
        entry = doc["corpora"].get(name)
        if entry is None:
            _entry(name)  # raises the not-registered error
        if policy is None:
            entry.pop("maintenance", None)
        else:
            entry["maintenance"] = policy.to_dict()
        return _policy_of(entry)


# -------------------------------------------------------------------- state


def maintenance_dir() -> Path:
    """The folder of the maintenance lock, logs and detection state
    (``.maintenance`` in :func:`rowvoi.corpus.storage.paths.corpora_dir`; never a
    corpus name, which cannot start with a dot).

    >>> maintenance_dir().name
    '.maintenance'
    """
    return corpora_dir() / ".maintenance"


def _state_path(name: str) -> Path:
    return maintenance_dir() / f"{name}.state.json"


def _log_path(name: str) -> Path:
    return maintenance_dir() / f"{name}.log.jsonl"


def _read_state(name: str) -> dict[str, Any]:
    try:
        doc = json.loads(_state_path(name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # unreadable state only costs a check against the ledger
    return doc if isinstance(doc, dict) and doc.get("version") == _STATE_VERSION else {}


def _write_state(name: str, state: Mapping[str, Any]) -> None:
    private_dir(maintenance_dir())
    atomic_write_bytes(
        _state_path(name),
        json.dumps({**state, "version": _STATE_VERSION}).encode(),
        mode=PRIVATE_FILE,
    )


def maintenance_log(name: str) -> list[dict[str, Any]]:
    """The maintenance log of ``name``, oldest first (``[]`` if none): one
    dict per run with ``time`` (ISO 8601, UTC), ``action``, ``reason``,
    ``policy``, ``seconds`` and, when a build ran, its ``counts``.

    >>> maintenance_log("never-maintained")
    []
    """
    check_name(name)
    try:
        lines = _log_path(name).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    return [json.loads(line) for line in lines if line.strip()]


def _append_log(name: str, row: Mapping[str, Any]) -> None:
    private_dir(maintenance_dir())
    path = _log_path(name)
    try:
        lines = path.read_bytes().splitlines()
    except FileNotFoundError:
        lines = []
    lines = lines[-(MAX_LOG_ENTRIES - 1) :] + [json.dumps(row, sort_keys=True).encode()]
    atomic_write_bytes(path, b"\n".join(lines) + b"\n", mode=PRIVATE_FILE)


def forget(name: str) -> bool:
    """Remove the maintenance state and log of ``name`` (what ``rowvoi rm``
    does when it unregisters a corpus, so a later corpus of the same name
    starts with no history). Returns whether anything was removed.

    Raises :class:`MaintenanceBusy` while a ``maintain`` run holds the lock
    (its pid is named): removing its files under it would lose its record.

    Thread-safety: serialized with ``maintain`` runs by the same lock.

    >>> import os, tempfile
    >>> os.environ["ROWVOI_HOME"] = tempfile.mkdtemp()
    >>> forget("never-maintained")
    False
    >>> del os.environ["ROWVOI_HOME"]
    """
    check_name(name)
    paths = [_state_path(name), _log_path(name)]
    if not any(p.exists() for p in paths):
        return False

    def busy(holder: Mapping[str, Any]) -> BaseException:
        return MaintenanceBusy(
            f"a 'rowvoi maintain' run is in progress: {holder_text(holder)}; "
            f"remove {name!r} when it has finished"
        )

    removed = False
    with pid_lock(maintenance_dir() / "maintain.lock", busy):
        for p in paths:
            try:
                p.unlink()
                removed = True
            except FileNotFoundError:
                pass
    return removed


def _entry_digest(entry: Mapping[str, Any]) -> str:
    recipe = {k: v for k, v in entry.items() if k != "maintenance"}
    return hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()


def _iso(t: float) -> str:
    return _dt.datetime.fromtimestamp(t, _dt.timezone.utc).isoformat(timespec="seconds")


# ---------------------------------------------------------------- detection


def _ledger(name: str) -> dict[str, str] | None:
    store = CorpusStore.local(name)
    if not store.exists():
        return None
    with store.snapshot() as snap:
        if snap.generation == 0:
            return None
        return snap.ledger()


def _files_change(
    entry: Mapping[str, Any], state: Mapping[str, Any], ledger: Mapping[str, str]
) -> tuple[str | None, dict[str, Any]]:
    """(what changed, or None; the new fingerprint) of a files corpus."""
    scope = _file_scope(entry)
    old = state.get("files") or {}
    taken = int(state.get("files_taken_ns") or 0)
    now_ns = time.time_ns()
    new: dict[str, list[Any]] = {}  # key -> [size, mtime_ns, change signal]
    n_new = n_changed = 0
    root = str(scope.root)
    for key in scope.keys_list():
        try:
            st = os.stat(os.path.join(root, key))
        except FileNotFoundError:
            continue  # gone between the walk and now: it is not in the source
        version = ledger.get(key)
        prev = old.get(key)
        if (
            prev is not None
            and prev[0] == st.st_size
            and prev[1] == st.st_mtime_ns
            and st.st_mtime_ns < taken - _RACY_NS
            and prev[2] == version
        ):
            new[key] = prev  # same size and mtime as a file the ledger has: unchanged
            continue
        try:
            text = scope[key]
        except KeyError:
            continue
        signal = content_hash_signal(key, text)
        new[key] = [st.st_size, st.st_mtime_ns, signal]
        if version is None:
            n_new += 1
        elif version != signal:
            n_changed += 1
    n_gone = sum(1 for k in ledger if k not in new)
    parts = [
        f"{n} {what}"
        for n, what in ((n_new, "new"), (n_changed, "changed"), (n_gone, "gone"))
        if n
    ]
    return (
        f"source changed: {', '.join(parts)}" if parts else None,
        {"files": new, "files_taken_ns": now_ns},
    )


def _file_scope(entry: Mapping[str, Any]) -> FileScope:
    """The folder scope a files corpus's registry entry describes."""
    return FileScope(
        entry["root"],
        entry.get("pattern") or _default_pattern(),
        entry.get("exclude"),
        follow_symlinks=bool(entry.get("follow_symlinks", False)),
    )


def _default_pattern() -> str:
    from rowvoi.corpus.indexing.sources import DFLT_FILE_PATTERN

    return DFLT_FILE_PATTERN


def _records_file_change(
    entry: Mapping[str, Any], state: Mapping[str, Any]
) -> tuple[str | None, dict[str, Any]]:
    path = Path(entry["path"])
    try:
        st = path.stat()
    except FileNotFoundError:
        raise FileNotFoundError(
            f"{path}: the records file of this corpus is gone; restore it "
            "or register the corpus again"
        ) from None
    if not stat.S_ISREG(st.st_mode):  # hashing a FIFO would wait forever
        raise ValueError(f"{path}: the records file of this corpus is not a regular file")
    prev = state.get("records_file") or {}
    if (
        prev.get("size") == st.st_size
        and prev.get("mtime_ns") == st.st_mtime_ns
        and st.st_mtime_ns < int(prev.get("taken_ns") or 0) - _RACY_NS
    ):
        return None, {"records_file": prev}
    digest = sha256_file(path)
    fp = {
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "sha256": digest,
        "taken_ns": time.time_ns(),
    }
    if not prev:
        return "no record of the source yet", {"records_file": fp}
    return (None if prev.get("sha256") == digest else "source changed: the records file"), {
        "records_file": fp
    }


def _fetcher_change(
    entry: Mapping[str, Any], state: Mapping[str, Any]
) -> tuple[str | None, dict[str, Any]]:
    from rowvoi.corpus.indexing.sources import resolve_fetcher

    records = resolve_fetcher(entry["fetcher"])()
    if not isinstance(records, (list, tuple, Mapping)):
        records = list(records)
    digest = content_hash_signal("", records)
    fp = {"fetched_sha256": digest}
    if not state.get("fetched_sha256"):
        return "no record of the source yet", fp
    return (
        None if state["fetched_sha256"] == digest else "source changed: the fetched records"
    ), fp


# ----------------------------------------------------------------- maintain


@dataclass
class MaintenanceResult:
    """What :func:`maintain` did (or, in a dry run, would do) to one corpus.

    Attributes
    ----------
    name : str
    action : str
        ``"built"`` (a build committed changes), ``"up to date"`` (a build
        ran and found nothing to commit), ``"nothing to do"``, ``"would
        build"`` (dry run), ``"skipped"`` (a manual corpus in a sweep),
        ``"damaged"`` (index files damaged: nothing built; ``error`` names
        the repair), ``"would repair"`` (a dry run with ``force``), or
        ``"error"``.
    reason : str
        Why, in words (``"never built"``, ``"source changed: 2 new"``,
        ``"interval elapsed (6h)"``, ``"source unchanged"``, ...).
    policy : str
        The policy in force, as a spec string.
    counts : dict or None
        The build's report (:meth:`rowvoi.corpus.BuildReport.to_dict`).
    error : str or None
        The error's message, when ``action == "error"``; for
        ``"damaged"``, the command that repairs the corpus.
    seconds : float
        Wall time spent on this corpus.
    damage : list of str or None
        The damaged files found (``"dense.3.rvf: missing"``): reported with
        ``action == "damaged"``, or repaired before the build with
        ``force`` (see :func:`rowvoi.corpus.repair`).
    """

    name: str
    action: str
    reason: str
    policy: str
    counts: dict[str, Any] | None = None
    error: str | None = None
    seconds: float = 0.0
    damage: list[str] | None = None

    @property
    def ran(self) -> bool:
        """Did a build run?"""
        return self.action in ("built", "up to date")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``ran`` included)."""
        return {**dataclasses.asdict(self), "ran": self.ran}


@dataclass
class MaintenanceReport:
    """A :func:`maintain` run: its per-corpus results (in name order),
    whether it was a dry run, and the pid of a dead run whose lock it took
    over (or ``None``). Iterating yields the results."""

    results: list[MaintenanceResult] = field(default_factory=list)
    dry_run: bool = False
    took_over_lock_of: int | None = None

    def __iter__(self) -> Iterator[MaintenanceResult]:
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    @property
    def nothing_to_do(self) -> bool:
        """True when no corpus was (or, dry, would be) built and none failed."""
        return all(r.action in ("nothing to do", "skipped") for r in self.results)

    @property
    def errors(self) -> list[MaintenanceResult]:
        """The results that need attention: ``action`` ``"error"`` or
        ``"damaged"``."""
        return [r for r in self.results if r.action in ("error", "damaged")]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "dry_run": self.dry_run,
            "nothing_to_do": self.nothing_to_do,
            "took_over_lock_of": self.took_over_lock_of,
            "results": [r.to_dict() for r in self.results],
        }


def _decide(
    name: str,
    entry: Mapping[str, Any],
    policy: MaintenancePolicy,
    state: Mapping[str, Any],
    *,
    named: bool,
    force: bool,
    now: float,
) -> tuple[str | None, str, dict[str, Any]]:
    """(reason to build or None, reason to skip, state updates)."""
    if policy.on == "manual" and not named and not force:
        return None, f"manual policy: run 'rowvoi maintain {name}' to rebuild it", {}
    ledger = _ledger(name)
    digest = _entry_digest(entry)
    updates: dict[str, Any] = {"entry_digest": digest}
    changed = None
    if policy.on == "on_source_change":
        # the fingerprint is taken before any build, so that a change racing
        # the build is seen by the next run (never lost)
        if entry["kind"] == "files":
            changed, fp = _files_change(entry, state, ledger or {})
        elif entry.get("path"):
            changed, fp = _records_file_change(entry, state)
        else:
            changed, fp = _fetcher_change(entry, state)
        updates.update(fp)
    if ledger is None:
        return "never built", "", updates
    if force:
        return "forced", "", updates
    if state.get("entry_digest") not in (None, digest):
        return "registration changed", "", updates
    if policy.on == "manual":
        return "asked by name (manual policy)", "", updates
    if policy.on == "interval" and policy.every is not None:  # interval always has every
        last = state.get("last_built")
        if not isinstance(last, (int, float)):
            return "never maintained", "", updates
        elapsed = now - last
        if elapsed >= policy.every:
            return f"interval elapsed ({format_duration(policy.every)})", "", updates
        return (
            None,
            (
                f"every {format_duration(policy.every)}: next run due in "
                f"{format_duration(policy.every - elapsed)}"
            ),
            updates,
        )
    return changed, "source unchanged", updates


def _damage(name: str, state: Mapping[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """(the damaged index files of a built corpus, state updates): every
    index file is looked at, and loaded and verified when it changed since
    it was last verified (its :func:`~rowvoi.corpus.storage.damage.fingerprint` is
    kept in the state), so a run loads a corpus's index files once per new
    generation, not on every run."""
    store = CorpusStore.local(name)
    if not store.exists():
        return [], {}
    verified = dict(state.get("verified") or {})
    with store.snapshot() as snap:
        written = snap.base.get("fingerprints")
        if isinstance(written, dict):
            verified = {**written, **verified}
        damage = check_files(store, snap, deep=True, database=False, verified=verified)
        keep = set(base_files(snap.base))
    return damage, {"verified": {k: v for k, v in verified.items() if k in keep}}


def _maintain_one(
    name: str, *, named: bool, force: bool, dry_run: bool, now: float, progress: bool | None
) -> MaintenanceResult:
    t0 = time.perf_counter()
    entry = _entry(name)
    policy = _policy_of(entry)
    state = _read_state(name)
    damage, checked = _damage(name, state)
    repaired: list[str] | None = None
    if damage:
        found = [str(d) for d in damage]
        repairable = all(d.repairable for d in damage)
        if force and repairable and not dry_run:
            from rowvoi.corpus.maintenance.repair import repair

            repair(name)
            repaired, checked = found, {"verified": {}}
        else:
            # reported, not built (an incremental build would keep the damaged
            # files, and refuses to): --force repairs first
            fix = (
                f"repair it: rowvoi maintain {name} --force (or rowvoi build {name} --repair)"
                if repairable
                else rebuild_advice(CorpusStore.local(name))
            )
            would = force and repairable  # (a dry run)
            result = MaintenanceResult(
                name,
                "would repair" if would else "damaged",
                "; ".join(found),
                policy.to_spec(),
                error=None if would else fix,
                damage=found,
                seconds=time.perf_counter() - t0,
            )
            if not dry_run:
                _write_state(name, {**state, **checked, "last_checked": now})
                _log(result, now)
            return result
    reason, skip_reason, updates = _decide(
        name, entry, policy, state, named=named, force=force, now=now
    )
    updates.update(checked)
    if reason is None:
        result = MaintenanceResult(
            name,
            "skipped" if policy.on == "manual" else "nothing to do",
            skip_reason,
            policy.to_spec(),
        )
    elif dry_run:
        result = MaintenanceResult(name, "would build", reason, policy.to_spec())
    else:
        report = build(registry.source_from_entry(name, entry), progress=progress).last_build
        result = MaintenanceResult(
            name,
            "built" if report.changed else "up to date",
            reason,
            policy.to_spec(),
            counts=report.to_dict(),
        )
        updates["last_built"] = now
    if repaired:
        result.damage = repaired
        result.reason += "; repaired " + "; ".join(repaired)
    result.seconds = time.perf_counter() - t0
    if not dry_run:
        _write_state(name, {**state, **updates, "last_checked": now})
        _log(result, now)
    return result


def _log(result: MaintenanceResult, now: float) -> None:
    row = {
        "time": _iso(now),
        "action": result.action,
        "reason": result.reason,
        "policy": result.policy,
        "seconds": round(result.seconds, 3),
    }
    if result.counts is not None:
        row["counts"] = {
            k: result.counts[k]
            for k in (
                "generation",
                "n_seen",
                "n_new",
                "n_changed",
                "n_unchanged",
                "n_deleted",
                "records_added",
                "records_removed",
                "texts_embedded",
                "rebuild",
            )
        }
    if result.error is not None:
        row["error"] = result.error
    if result.damage:
        row["damage"] = result.damage
    _append_log(result.name, row)


def maintain(
    name: str | None = None,
    *,
    all: bool = False,
    dry_run: bool = False,
    force: bool = False,
    now: float | None = None,
    progress: bool | None = False,
) -> MaintenanceReport:
    """Bring registered corpora up to date by their policies.

    Parameters
    ----------
    name : str, optional
        One registered corpus. Errors are logged, then raised. A
        ``manual`` corpus is rebuilt when named.
    all : bool
        Every registered corpus, in name order (give ``name`` or
        ``all=True``, not both). An error on one corpus (any exception: a
        fetcher is user code) is recorded in its result (``action ==
        "error"``) and log, and the sweep goes on; ``manual`` corpora are
        skipped.
    dry_run : bool
        Decide only: build nothing, write no state and no log, take no lock.
        (Checking a fetcher corpus's source still calls the fetcher.)
    force : bool
        Build whatever the policy says (the build is still incremental),
        and first repair a corpus whose index files are damaged
        (:func:`rowvoi.corpus.repair`: from its stored rows and embedding
        cache, re-embedding nothing). Without it a damaged corpus is
        reported (``action == "damaged"``, with the repair command) and not
        built.
    now : float, optional
        The time to judge intervals by (seconds since the epoch; default
        now).
    progress : bool, optional
        A line per corpus and the builds' progress bars on stderr (default
        off; ``None``: when stderr is a terminal).

    Returns
    -------
    MaintenanceReport
        One :class:`MaintenanceResult` per corpus.

    Raises
    ------
    MaintenanceBusy
        Another ``maintain`` run is in progress.
    CorpusNotFound
        ``name`` is not registered.
    ValueError
        Neither or both of ``name`` and ``all``; a malformed policy.
    CorpusLocked, OSError, ...
        With ``name``: what its check or build raised (a corpus being built
        by ``rowvoi build``, a source that is gone, a failing fetcher).

    Notes
    -----
    Idempotent: a run right after a run finds nothing to do. A fetcher is
    user code: checking or building a fetcher corpus imports and calls it.
    Thread-safety: runs are serialized across processes by the lock (a
    second is refused, not queued).
    """
    if (name is None) == (not all):
        raise ValueError("give a corpus name or all=True (not both)")
    names = [check_name(name)] if name is not None else sorted(registry_file.registered())
    if name is not None:
        _entry(name)
    when = time.time() if now is None else float(now)
    report = MaintenanceReport(dry_run=bool(dry_run))

    show = sys.stderr.isatty() if progress is None else bool(progress)

    def run() -> None:
        for i, n in enumerate(names, 1):
            if show:
                print(f"rowvoi maintain: [{i}/{len(names)}] {n}", file=sys.stderr, flush=True)
            t0 = time.perf_counter()
            try:
                report.results.append(
                    _maintain_one(
                        n,
                        named=name is not None,
                        force=force,
                        dry_run=dry_run,
                        now=when,
                        progress=progress,
                    )
                )
            except Exception as exc:  # a fetcher is user code: it may raise anything
                msg = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
                entry = registry_file.get(n) or {}
                try:
                    spec = _policy_of(entry).to_spec()
                except (ValueError, TypeError):
                    spec = repr(entry.get("maintenance"))
                res = MaintenanceResult(
                    n,
                    "error",
                    type(exc).__name__,
                    spec,
                    error=msg,
                    seconds=time.perf_counter() - t0,
                )
                if not dry_run:
                    _log(res, when)
                if name is not None:
                    raise
                report.results.append(res)

    if dry_run:
        run()
        return report
    private_dir(maintenance_dir())

    def busy(holder: Mapping[str, Any]) -> BaseException:
        return MaintenanceBusy(
            f"another 'rowvoi maintain' run is in progress: "
            f"{holder_text(holder)}; one run at a time: wait for it to "
            "finish (a dead run's lock is taken over)"
        )

    with pid_lock(maintenance_dir() / "maintain.lock", busy) as previous:
        dead = previous.get("pid")
        if dead and dead != os.getpid():
            report.took_over_lock_of = int(dead)
        run()
    return report


# ----------------------------------------------------------------- coverage


@dataclass
class CoverageReport:
    """Which files of a files corpus's folder are indexed, and why the
    others are not.

    Attributes
    ----------
    name, root, pattern : str
    on_disk : list of str
        Every entry under ``root`` outside the excluded directories that
        is not a folder -- files, symbolic links, FIFOs, sockets, devices
        (relative paths, sorted; a name that is not UTF-8 with ``\\xNN``
        escapes).
    indexed : list of str
        In the source and in the corpus's ledger.
    pending : list of str
        In the source, not yet in the ledger (the next build adds them).
    excluded : dict of str to list of str
        Entries on disk the source leaves out, by reason (every one of
        :data:`~rowvoi.corpus.indexing.sources.SKIP_REASONS` is a key):
        ``"pattern"`` (the path does not match), ``"binary"`` (a NUL byte
        in the first 8 KB), ``"hidden"`` (a name starting with a dot),
        ``"symlink"`` (a symbolic link leading outside the root, or
        dangling), ``"special"`` (a FIFO, socket or device: never read),
        ``"undecodable_name"`` (a name that is not UTF-8),
        ``"unreadable"`` (no permission). The builder has no size limit,
        so no file is left out by size.
    excluded_dirs : list of str
        Directories not walked (excluded names, hidden directories,
        symbolic links to directories unless the corpus follows them).
    missing : list of str
        In the ledger but gone from disk (the next build removes them).
    out_of_scope : list of str
        In the ledger, still on disk, but no longer in the source (a
        changed pattern; the next build removes them).
    """

    name: str
    root: str
    pattern: str
    on_disk: list[str]
    indexed: list[str]
    pending: list[str]
    excluded: dict[str, list[str]]
    excluded_dirs: list[str]
    missing: list[str]
    out_of_scope: list[str]

    @property
    def coverage_ratio(self) -> float:
        """indexed / (indexed + pending): the share of the source that is
        searchable now (1.0 for an empty source)."""
        total = len(self.indexed) + len(self.pending)
        return 1.0 if total == 0 else len(self.indexed) / total

    def counts(self) -> dict[str, int]:
        """The size of each category."""
        return {
            "on_disk": len(self.on_disk),
            "indexed": len(self.indexed),
            "pending": len(self.pending),
            "excluded": sum(len(v) for v in self.excluded.values()),
            **{f"excluded_{k}": len(v) for k, v in self.excluded.items()},
            "excluded_dirs": len(self.excluded_dirs),
            "missing": len(self.missing),
            "out_of_scope": len(self.out_of_scope),
        }

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: the categories' paths, ``counts`` and
        ``coverage_ratio``."""
        return {
            **dataclasses.asdict(self),
            "counts": self.counts(),
            "coverage_ratio": self.coverage_ratio,
        }


def coverage(name: str) -> CoverageReport:
    """Compare a registered files corpus's folder with its index.

    Raises
    ------
    CorpusNotFound
        ``name`` is not registered.
    ValueError
        ``name`` is not a files corpus.
    FileNotFoundError
        Its folder is gone.

    Reads files only to tell binary ones (8 KB each); loads no index.
    Thread-safety: read-only; safe alongside a build (it sees the last
    committed ledger).

    Examples
    --------
    >>> import os, tempfile, pathlib
    >>> os.environ["ROWVOI_HOME"] = tempfile.mkdtemp()
    >>> d = pathlib.Path(tempfile.mkdtemp()); _ = (d / "a.md").write_text("Lift")
    >>> _ = (d / "logo.png").write_bytes(b"\\x89PNG\\x00")
    >>> from rowvoi.corpus.maintenance.registry import register
    >>> _ = register("notes", "files", root=str(d), embedder="hashing:16")
    >>> r = coverage("notes"); r.pending, r.excluded["pattern"], r.coverage_ratio
    (['a.md'], ['logo.png'], 0.0)
    >>> del os.environ["ROWVOI_HOME"]
    """
    entry = _entry(check_name(name))
    if entry["kind"] != "files":
        raise ValueError(
            f"corpus {name!r} is a {entry['kind']} corpus; coverage compares a "
            "files corpus's folder with its index"
        )
    scope = _file_scope(entry)
    scan = scope.scan(warn=False)  # (the report lists them)
    in_source = set(scan.keys)
    ledger = _ledger(name) or {}
    on_disk = list(scan.keys) + [p for paths in scan.excluded.values() for p in paths]
    disk = set(on_disk)
    return CoverageReport(
        name=name,
        root=str(scope.root),
        pattern=scope.pattern,
        on_disk=sorted(on_disk),
        indexed=sorted(k for k in in_source if k in ledger),
        pending=sorted(k for k in in_source if k not in ledger),
        excluded={k: list(v) for k, v in scan.excluded.items()},
        excluded_dirs=list(scan.excluded_dirs),
        missing=sorted(k for k in ledger if k not in disk),
        out_of_scope=sorted(k for k in ledger if k in disk and k not in in_source),
    )
