"""The corpus verbs of the ``rowvoi`` command: build, search, ls, info, rm,
register.

:func:`add_parsers` registers them on the main parser's subparsers; each
verb function returns an exit code and raises the CLI's
:class:`~rowvoi.cli.CliError` / :class:`~rowvoi.cli.UsageError` (or a
library error, which :func:`rowvoi.cli.main` maps to exit 1), so the one
exit-code rule of :mod:`rowvoi.cli` holds.

Examples
--------
>>> import os, tempfile, pathlib, contextlib, io
>>> os.environ["ROWVOI_HOME"] = tempfile.mkdtemp()
>>> notes = pathlib.Path(tempfile.mkdtemp())
>>> _ = (notes / "wing.md").write_text("Lift and drag of a thin wing")
>>> _ = (notes / "pipe.md").write_text("Heat transfer in a pipe")
>>> from rowvoi.cli import main
>>> with contextlib.redirect_stdout(io.StringIO()) as out:
...     rc = main(["build", "notes", "--files", str(notes), "--embedder", "hashing"])
>>> rc, out.getvalue().startswith("built corpus 'notes' (generation 1): 2 artifacts")
(0, True)
>>> with contextlib.redirect_stdout(io.StringIO()) as out:
...     rc = main(["search", "notes", "wing drag", "--mode", "lexical", "--json"])
>>> import json; [h["artifact_id"] for h in json.loads(out.getvalue())["hits"]]
['wing.md']
>>> del os.environ["ROWVOI_HOME"]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, overload

if TYPE_CHECKING:
    from rowvoi.corpus.base import SearchHit

__all__ = ["add_parsers"]


def _errors() -> tuple[type, type]:
    from rowvoi.cli import CliError, UsageError

    return CliError, UsageError


def _positive_int(what: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None
        if value < 1:
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
        return value

    parse.__name__ = what
    return parse


def _int(text: str) -> int:
    """An integer flag; its range is the library's to check (exit 1, not 2),
    so ``--k 0`` fails like ``search(..., k=0)`` does."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None


_int.__name__ = "an integer"


def _csv(text: str) -> list[str]:
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise argparse.ArgumentTypeError(f"expected a comma-separated list, got {text!r}")
    return items


# ------------------------------------------------------------------ source


def _strategy_spec(args: argparse.Namespace) -> dict[str, Any] | None:
    """The strategy spec the flags ask for (None: none asked)."""
    from rowvoi.corpus.strategy import (
        Chunked,
        Fields,
        WholeText,
        _Strategy,
        strategy_to_spec,
    )

    _, UsageError = _errors()
    strat: _Strategy
    name = args.strategy
    chunk_flags = any(v is not None for v in (args.chunk_size, args.overlap, args.max_tokens))
    if name is None and args.fields is None and not chunk_flags:
        return None
    if name is None:
        name = "fields" if args.fields is not None else "chunked"
    kw: dict[str, Any] = {}
    if args.chunk_size is not None:
        kw["chunk_size"] = args.chunk_size
    if args.overlap is not None:
        kw["overlap"] = args.overlap
    if args.max_tokens is not None:
        kw["max_tokens"] = args.max_tokens
    try:
        if name == "whole":
            if chunk_flags or args.fields:
                raise UsageError(
                    "--strategy whole takes no --chunk-size, --overlap, --max-tokens or --fields"
                )
            strat = WholeText(text_key=getattr(args, "text_key", None))
        elif name == "chunked":
            if args.fields:
                raise UsageError("--fields needs --strategy fields")
            strat = Chunked(text_key=getattr(args, "text_key", None), **kw)
        else:
            if not args.fields:
                raise UsageError("--strategy fields needs --fields FIELD,FIELD,...")
            strat = Fields(tuple(args.fields), chunked=tuple(args.chunked_fields or ()), **kw)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return strategy_to_spec(strat)


def _entry_from_flags(args: argparse.Namespace) -> dict[str, Any] | None:
    """A registry entry from --files/--records/--fetcher flags (None: none given)."""
    _CliError, UsageError = _errors()
    given = [f for f in ("files", "records", "fetcher") if getattr(args, f, None)]
    if len(given) > 1:
        raise UsageError("give one source: --files FOLDER, --records FILE or --fetcher MOD:ATTR")
    record_flags = [
        f for f in ("id_key", "text_key", "metadata_keys") if getattr(args, f, None) is not None
    ]
    if not given:
        if args.pattern is not None or record_flags:
            raise UsageError(
                "--pattern, --id-key, --text-key and --metadata-keys go with a "
                "source (--files or --records)"
            )
        return None
    if given[0] == "files":
        if record_flags:
            raise UsageError("--id-key, --text-key and --metadata-keys go with --records")
        entry: dict[str, Any] = {"kind": "files", "root": args.files}
        if args.pattern is not None:
            entry["pattern"] = args.pattern
    else:
        if args.pattern is not None:
            raise UsageError("--pattern goes with --files")
        entry = {"kind": "records"}
        if given[0] == "records":
            entry["path"] = args.records
        else:
            entry["fetcher"] = args.fetcher
        entry["id_key"] = args.id_key or "id"
        entry["text_key"] = args.text_key or "text"
        if args.metadata_keys:
            entry["metadata_keys"] = args.metadata_keys
    return entry


def _add_source_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("source (one of)")
    g.add_argument(
        "--files",
        metavar="FOLDER",
        help="index the text files under FOLDER (ids: paths relative to it)",
    )
    g.add_argument(
        "--records",
        metavar="FILE",
        help="index the records of a .jsonl, .json, .csv or .parquet file",
    )
    g.add_argument(
        "--fetcher",
        metavar="MODULE:ATTR",
        help="index the records a function returns (importing MODULE runs its "
        "code: name only modules you trust)",
    )
    p.add_argument(
        "--pattern",
        metavar="REGEX",
        help="with --files: regular expression searched in each relative path "
        r"(default: .md, .markdown, .txt and .rst files)",
    )
    p.add_argument("--id-key", metavar="KEY", help="with --records: the id field (default id)")
    p.add_argument(
        "--text-key", metavar="KEY", help="with --records: the text field (default text)"
    )
    p.add_argument(
        "--metadata-keys",
        metavar="K1,K2",
        type=_csv,
        help="with --records: fields to filter on (not embedded)",
    )
    p.add_argument(
        "--embedder",
        metavar="SPEC",
        help="minilm (default), hashing, or hashing:DIM; changing it re-embeds everything",
    )
    s = p.add_argument_group("strategy (how each item becomes text)")
    s.add_argument(
        "--strategy",
        choices=("whole", "chunked", "fields"),
        help="whole: one surface per item (default for files); chunked: "
        "overlapping chunks (default for records); fields: named fields as "
        "separate surfaces",
    )
    s.add_argument(
        "--chunk-size",
        type=_positive_int("an integer >= 1"),
        metavar="CHARS",
        help="chunk length in characters (default 1200)",
    )
    s.add_argument(
        "--overlap",
        type=_positive_int("an integer >= 1"),
        metavar="CHARS",
        help="characters shared by consecutive chunks (default 200)",
    )
    s.add_argument(
        "--max-tokens",
        type=_positive_int("an integer >= 1"),
        metavar="N",
        help="chunk by MiniLM tokens instead (250 fits the model)",
    )
    s.add_argument(
        "--fields",
        type=_csv,
        metavar="F1,F2",
        help="with --strategy fields: the record fields, in order",
    )
    s.add_argument(
        "--chunked-fields",
        type=_csv,
        metavar="F1,...",
        help="with --strategy fields: fields to chunk",
    )
    e = p.add_argument_group("links (the corpus's graph: rowvoi graph NAME ...)")
    e.add_argument(
        "--edge-fields",
        type=_csv,
        metavar="F[=TYPE],...",
        help="metadata fields naming other items, each an edge type: parent "
        "(PARENT), links and deps (REF), any other FIELD (FIELD upper-cased) "
        "or FIELD=TYPE; e.g. --edge-fields parent,links",
    )


def _edges_spec(args: argparse.Namespace) -> dict[str, Any] | None:
    """The edge extractor spec --edge-fields asks for (None: not given)."""
    from rowvoi.corpus.edges import DEFAULT_EDGE_FIELDS, FieldEdges

    _, UsageError = _errors()
    items = getattr(args, "edge_fields", None)
    if items is None:
        return None
    fields: dict[str, str] = {}
    for item in items:
        name, _, etype = item.partition("=")
        name, etype = name.strip(), etype.strip()
        if not name or ("=" in item and not etype):
            raise UsageError(f"--edge-fields: {item!r} is not FIELD or FIELD=TYPE")
        fields[name] = etype or DEFAULT_EDGE_FIELDS.get(name, name.upper())
    return FieldEdges(fields).spec()


@overload
def _register_from_flags(
    name: str, args: argparse.Namespace, *, required: Literal[True]
) -> dict[str, Any]: ...
@overload
def _register_from_flags(
    name: str, args: argparse.Namespace, *, required: bool
) -> dict[str, Any] | None: ...
def _register_from_flags(
    name: str, args: argparse.Namespace, *, required: bool
) -> dict[str, Any] | None:
    """Register the flags' recipe (keeping the old entry's embedder and
    strategy unless the flags change them); returns the entry in force."""
    from rowvoi.corpus import registry

    _CliError, UsageError = _errors()
    entry = _entry_from_flags(args)
    old = registry.get(name)
    strategy = _strategy_spec(args)
    edges = _edges_spec(args)
    if entry is None:
        if required:
            raise UsageError(
                "give the source: --files FOLDER, --records FILE or --fetcher MODULE:ATTR"
            )
        if old is None:
            return None
        if args.embedder is None and strategy is None and edges is None:
            return old
        entry = {k: v for k, v in old.items()}
    params = {k: v for k, v in entry.items() if k not in ("kind", "embedder", "strategy", "edges")}
    if edges is None and old is not None:
        edges = old.get("edges")
    if edges is not None:
        params["edges"] = edges
    embedder = args.embedder or (old or {}).get("embedder") or _pinned_spec(name) or "default"
    if strategy is None and old is not None and old.get("kind") == entry["kind"]:
        strategy = old.get("strategy")
    return registry.register(name, entry["kind"], embedder=embedder, strategy=strategy, **params)


def _pinned_spec(name: str) -> str | None:
    """The embedder spec an existing corpus was built with (None if none)."""
    from rowvoi.corpus.store import CorpusStore

    store = CorpusStore.local(name)
    if not store.exists():
        return None
    with store.snapshot() as snap:
        return snap.state.get("embedder_spec")


# ------------------------------------------------------------------- verbs


def _cmd_build(args: argparse.Namespace) -> int:
    from rowvoi.corpus import registry
    from rowvoi.corpus.index import build

    CliError, _ = _errors()
    entry = _register_from_flags(args.name, args, required=False)
    if entry is None:
        raise CliError(
            f"corpus {args.name!r} is not registered: give its source "
            f"(rowvoi build {args.name} --files FOLDER, or --records FILE)"
        )
    from rowvoi.corpus.edges import extractor_from_spec

    source = registry.source_from_entry(args.name, entry)
    progress = False if args.json else None
    corpus = build(
        source,
        full=not args.keep_missing,
        progress=progress,
        hnsw=args.hnsw,
        edges=extractor_from_spec(entry.get("edges")),
    )
    r = corpus.last_build
    if args.json:
        print(json.dumps({"corpus": args.name, "path": str(corpus.store.path), **r.to_dict()}))
        return 0
    n = r.n_seen
    if not r.changed:
        print(
            f"corpus {args.name!r} is up to date (generation {r.generation}): {n} "
            f"artifact{'s' if n != 1 else ''} unchanged; nothing embedded; "
            f"{r.seconds:.2f} s"
        )
        return 0
    extra = f"; rebuilt: {r.rebuild}" if r.rebuild and r.rebuild != "first build" else ""
    print(
        f"built corpus {args.name!r} (generation {r.generation}): {n} artifacts -- "
        f"{r.n_new} new, {r.n_changed} changed, {r.n_unchanged} unchanged, {r.n_deleted} "
        f"deleted; {r.records_added} records written, {r.texts_embedded} texts embedded "
        f"({r.cache_hits} from the cache){extra}"
        + (f"; {r.n_links} links" if r.n_links else "")
        + f"; {r.seconds:.2f} s"
    )
    return 0


def _cmd_register(args: argparse.Namespace) -> int:
    entry = _register_from_flags(args.name, args, required=True)
    if args.json:
        print(json.dumps({"corpus": args.name, **entry}))
    else:
        where = entry.get("root") or entry.get("path") or entry.get("fetcher")
        print(
            f"registered {args.name!r}: {entry['kind']} from {where} (embedder "
            f"{entry['embedder']}); build it: rowvoi build {args.name}"
        )
    return 0


def _snippet(text: str, width: int = 96) -> str:
    one = " ".join(text.split())
    return one if len(one) <= width else one[: width - 3] + "..."


def _cmd_search(args: argparse.Namespace) -> int:
    from rowvoi.corpus.retrieve import open_corpus, search

    _, UsageError = _errors()
    flt = None
    if args.filter is not None:
        try:
            flt = json.loads(args.filter)
        except json.JSONDecodeError as exc:
            raise UsageError(f"--filter: not valid JSON ({exc.msg})") from None
        if not isinstance(flt, dict):
            raise UsageError(
                '--filter: a filter is a JSON object, e.g. \'{"year": {"$gte": 1960}}\''
            )
    corpus = open_corpus(args.name)
    hits = search(
        corpus,
        args.query,
        k=args.k,
        mode=args.mode,
        fusion=args.fusion,
        filter=flt,
        surfaces=args.surfaces,
        explain=args.explain,
        index=args.index,
    )
    if args.json:
        print(
            json.dumps(
                {
                    "corpus": args.name,
                    "query": args.query,
                    "mode": args.mode,
                    "fusion": args.fusion if args.mode == "hybrid" else None,
                    "hits": [h.to_dict() for h in hits],
                    "reason": hits.reason,
                }
            )
        )
        return 0
    print_hits(hits)
    return 0


def print_hits(hits: Sequence[SearchHit], note: Callable[[SearchHit], str] | None = None) -> None:
    """One hit per two lines (rank, score, id, kind, ``note(hit)``; the
    snippet), then its pointer; ``(no hits)`` for none, with the reason a
    :class:`~rowvoi.corpus.SearchHits` gives (``(no hits: REASON)``)."""
    if not hits:
        reason = getattr(hits, "reason", None)
        print("(no hits)" if not reason else f"(no hits: {reason})")
    for rank, h in enumerate(hits, 1):
        extra = f"  {note(h)}" if note is not None else ""
        print(f"{rank:3d}  {h.score:8.4f}  {h.artifact_id}  [{h.surface_kind}]{extra}")
        print(f"     {_snippet(h.text)}")
        if h.pointer:
            print(f"     {h.pointer}")


def _corpus_rows() -> list[dict[str, Any]]:
    from rowvoi.corpus import registry
    from rowvoi.corpus.paths import corpora_dir
    from rowvoi.corpus.store import CorpusStore, is_corpus_dir

    names: set[str] = set(registry.registered())
    root = corpora_dir()
    if root.is_dir():
        names |= {p.name for p in root.iterdir() if is_corpus_dir(p)}
    rows = []
    for name in sorted(names):
        entry = registry.get(name)
        store = CorpusStore.local(name)
        row: dict[str, Any] = {
            "name": name,
            "built": store.exists(),
            "registered": entry is not None,
            "kind": None if entry is None else entry["kind"],
            "source": None
            if entry is None
            else (entry.get("root") or entry.get("path") or entry.get("fetcher")),
        }
        if store.exists():
            with store.snapshot() as snap:
                s = snap.state
                row.update(
                    {
                        "generation": snap.generation,
                        "n_artifacts": s.get("n_artifacts", 0),
                        "n_records": s.get("n_records", 0),
                        "embedder": s.get("embedder_spec") or s.get("embedder_id"),
                        "updated": s.get("updated"),
                    }
                )
        rows.append(row)
    return rows


def _cmd_ls(args: argparse.Namespace) -> int:
    rows = _corpus_rows()
    if args.json:
        print(json.dumps(rows))
        return 0
    if not rows:
        print("no corpora yet; build one: rowvoi build NAME --files FOLDER")
        return 0
    table = [("NAME", "ARTIFACTS", "RECORDS", "EMBEDDER", "UPDATED", "SOURCE")]
    for r in rows:
        upd = r.get("updated")
        table.append(
            (
                r["name"],
                str(r.get("n_artifacts", "-")),
                str(r.get("n_records", "-")),
                str(r.get("embedder") or "-"),
                time.strftime("%Y-%m-%d %H:%M", time.localtime(upd)) if upd else "not built",
                str(r.get("source") or "-"),
            )
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    for row in table:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip())
    return 0


def _cmd_info(args: argparse.Namespace) -> int:
    from rowvoi.corpus import registry
    from rowvoi.corpus.retrieve import open_corpus

    info = open_corpus(args.name).info()
    info["registry"] = registry.get(args.name)
    if args.json:
        print(json.dumps(info))
        return 0
    emb = info["embedder"]
    print(f"corpus {args.name!r}: {info['path']}")
    print(
        f"  generation {info['generation']} (index files of generation "
        f"{info['base_generation']}, {info['n_delta']} records added and "
        f"{info['n_tombstones']} removed since)"
    )
    print(
        f"  {info['n_artifacts']} artifacts, {info['n_records']} records; kinds: "
        + (", ".join(f"{k} {n}" for k, n in info["kinds"].items()) or "none")
    )
    print(f"  embedder: {emb['id']} ({emb['dim']} dimensions)")
    print(f"  strategy: {info['strategy']['id']}")
    if info.get("n_links") or info.get("edges"):
        print(f"  links: {info['n_links']} (extractor {(info.get('edges') or {}).get('id')})")
    fields = info["fields"]
    print("  filter fields: " + (", ".join(f"{n} ({t})" for n, t in fields.items()) or "none"))
    print(f"  files: {len(info['files'])}, {info['bytes']:,} bytes")
    for name, size in info["files"].items():
        print(f"    {name}  {size:,}")
    return 0


def _cmd_rm(args: argparse.Namespace) -> int:
    from rowvoi.corpus import registry
    from rowvoi.corpus.store import CorpusStore, remove_corpus

    CliError, _ = _errors()
    store = CorpusStore.local(args.name)
    entry = registry.get(args.name)
    if not store.exists() and entry is None:
        raise CliError(f"no corpus {args.name!r} (see rowvoi ls)")
    unregister = entry is not None and not args.keep_registration
    if unregister:
        from rowvoi.corpus.maintenance import forget

        forget(args.name)  # first: a live maintain run refuses it, nothing lost
    if store.exists():
        remove_corpus(store)
    if unregister:
        registry.unregister(args.name)
    if args.json:
        print(
            json.dumps(
                {
                    "removed": args.name,
                    "data": store.path.exists() is False,
                    "unregistered": unregister,
                }
            )
        )
    else:
        print(f"removed corpus {args.name!r}")
    return 0


# ----------------------------------------------------------------- parsers


def add_parsers(sub: Any) -> None:
    """Register the corpus verbs on the ``rowvoi`` subparsers.

    >>> import argparse
    >>> sub = argparse.ArgumentParser(prog="rowvoi").add_subparsers()
    >>> add_parsers(sub); sorted(sub.choices)
    ['build', 'info', 'ls', 'register', 'rm', 'search']
    """
    p = sub.add_parser(
        "build",
        help="build or update a corpus (incremental)",
        description="Build the corpus NAME, or bring it up to date: only new and changed "
        "items are embedded and indexed, items gone from the source are "
        "removed. Give the source the first time (--files or --records); it is "
        "registered, so later 'rowvoi build NAME' needs no flags. A change of "
        "embedder or strategy rebuilds what it must. Progress goes to stderr on "
        "a terminal. Exit 1 if the corpus is being built by another process.",
        epilog="example: rowvoi build notes --files ~/notes; rowvoi build papers --records "
        "papers.jsonl --id-key id --text-key abstract --metadata-keys year,venue",
    )
    p.add_argument("name", metavar="NAME", help="corpus name (A-Z a-z 0-9 . _ -)")
    _add_source_args(p)
    p.add_argument(
        "--keep-missing",
        action="store_true",
        help="keep items the source no longer has (default: remove them)",
    )
    h = p.add_mutually_exclusive_group()
    h.add_argument(
        "--hnsw",
        dest="hnsw",
        action="store_true",
        default=None,
        help="keep an HNSW graph for approximate vector search (large corpora)",
    )
    h.add_argument(
        "--no-hnsw",
        dest="hnsw",
        action="store_false",
        help="exact vector search only (the default for a new corpus)",
    )
    p.add_argument("--json", action="store_true", help="print the build report as JSON")
    p.set_defaults(func=_cmd_build, verb_parser=p)

    p = sub.add_parser(
        "register",
        help="record how to build a corpus, without building it",
        description="Register (or replace) the recipe of corpus NAME in corpora.json: its "
        "source, embedder and strategy. 'rowvoi build NAME' then builds it.",
    )
    p.add_argument("name", metavar="NAME")
    _add_source_args(p)
    p.add_argument("--json", action="store_true", help="print the entry as JSON")
    p.set_defaults(func=_cmd_register, verb_parser=p)

    p = sub.add_parser(
        "search",
        help="search a corpus (dense, lexical or hybrid)",
        description="Search corpus NAME for QUERY. Modes: dense (cosine of embeddings, "
        "default), lexical (BM25; never loads the model), hybrid (both, fused "
        "by rrf or blend). --filter takes a JSON filter over the corpus's filter "
        "fields (see 'rowvoi info NAME'), e.g. '{\"year\": {\"$gte\": 1960}}'; "
        "operators $eq $ne $in $nin $lt $lte $gt $gte $exists $contains $and "
        "$or. Exit 1 for an unknown or empty corpus or a filter the corpus "
        "cannot apply.",
        epilog="example: rowvoi search notes 'wing drag' --mode hybrid --k 5",
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument("query", metavar="QUERY")
    p.add_argument("--k", type=_int, default=10, help="hits to show, >= 1 (default 10)")
    p.add_argument(
        "--mode", default="dense", metavar="{dense,lexical,hybrid}", help="ranking (default dense)"
    )
    p.add_argument(
        "--fusion",
        default="rrf",
        metavar="{rrf,blend}",
        help="hybrid fusion: rrf (by rank, default) or blend (by score)",
    )
    p.add_argument("--filter", metavar="JSON", help="a filter over the filter fields")
    p.add_argument("--surfaces", type=_csv, metavar="K1,K2", help="only these surface kinds")
    p.add_argument(
        "--index",
        default="auto",
        metavar="{auto,flat,hnsw}",
        help="vector index: the HNSW graph when the corpus has one (auto), or exact search (flat)",
    )
    p.add_argument(
        "--explain",
        action="store_true",
        help="with --json: each query term's BM25 contribution per hit",
    )
    p.add_argument("--json", action="store_true", help="print JSON for programs")
    p.set_defaults(func=_cmd_search, verb_parser=p)

    p = sub.add_parser(
        "ls", help="list corpora", description="List the built and registered corpora."
    )
    p.add_argument("--json", action="store_true", help="print JSON for programs")
    p.set_defaults(func=_cmd_ls, verb_parser=p)

    p = sub.add_parser(
        "info",
        help="describe a corpus",
        description="Describe corpus NAME: counts, surface kinds, filter "
        "fields and their types, embedder, strategy, files and "
        "bytes on disk. Loads no model and no index.",
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument("--json", action="store_true", help="print JSON for programs")
    p.set_defaults(func=_cmd_info, verb_parser=p)

    p = sub.add_parser(
        "rm",
        help="delete a corpus",
        description="Delete the built data of corpus NAME and its "
        "registration. Exit 1 if it is being built.",
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument(
        "--keep-registration",
        action="store_true",
        help="keep its recipe in corpora.json (rebuild it with rowvoi build NAME)",
    )
    p.add_argument("--json", action="store_true", help="print JSON for programs")
    p.set_defaults(func=_cmd_rm, verb_parser=p)
