"""The corpus verbs of the ``rowvoi`` command: build, register, search, ls,
info, rm.

:func:`add_parsers` registers them on the main parser's subparsers; each
verb function returns an exit code and raises the CLI's
:class:`~rowvoi.cli._common.CliError` /
:class:`~rowvoi.cli._common.UsageError` (or a library error, which
:func:`rowvoi.cli.main.main` maps to exit 1), so the one exit-code rule of
:mod:`rowvoi.cli` holds.

Examples
--------
>>> import os, tempfile, pathlib, contextlib, io
>>> os.environ["ROWVOI_HOME"] = tempfile.mkdtemp()
>>> notes = pathlib.Path(tempfile.mkdtemp())
>>> _ = (notes / "wing.md").write_text("Lift and drag of a thin wing")
>>> _ = (notes / "pipe.md").write_text("Heat transfer in a pipe")
>>> from rowvoi.cli.main import main
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
import sys
import time
import warnings
from typing import Any, Literal, overload

from rowvoi.cli._common import (
    INT_MAX,
    MAX_JSON_BYTES,
    CliError,
    UsageError,
    add_rerank_args,
    check_input_file,
    corpus_name,
    embedder_spec,
    integer,
    name_list,
    open_input,
    print_hits,
    print_json,
    printable,
    regex,
    rerank_from_args,
    search_k,
)
from rowvoi.corpus import (
    FUSIONS,
    MODES,
    Chunked,
    CorpusStore,
    FieldEdges,
    Fields,
    IndexingStrategy,
    SkippedFileWarning,
    WholeText,
    build,
    corpora_dir,
    open_corpus,
    registry,
    repair,
    search,
    strategy_to_spec,
)
from rowvoi.corpus.indexing.edges import DEFAULT_EDGE_FIELDS, extractor_from_spec
from rowvoi.corpus.maintenance.runs import forget
from rowvoi.corpus.retrieval.corpus import kept_corpus
from rowvoi.corpus.retrieval.rank import INDEXES, MAX_FETCH_K
from rowvoi.corpus.storage.store import is_corpus_dir, remove_corpus
from rowvoi.errors import IndexFormatError
from rowvoi.query import MAX_FILTER_DEPTH, OPERATORS

__all__ = ["add_parsers"]


# ------------------------------------------------------------------ source


def _strategy_spec(args: argparse.Namespace) -> dict[str, Any] | None:
    """The strategy spec the flags ask for (None: none asked)."""
    strat: IndexingStrategy
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
    """A registry entry from --files/--records/--fetcher/--mcp-tools flags
    (None: none given)."""
    given = [f for f in ("files", "records", "fetcher", "mcp_tools") if getattr(args, f, None)]
    if len(given) > 1:
        raise UsageError(
            "give one source: --files FOLDER, --records FILE, --fetcher MOD:ATTR "
            "or --mcp-tools FILE"
        )
    record_flags = [
        f for f in ("id_key", "text_key", "metadata_keys") if getattr(args, f, None) is not None
    ]
    follow = bool(getattr(args, "follow_symlinks", False))
    if not given:
        if args.pattern is not None or record_flags or follow:
            raise UsageError(
                "--pattern, --follow-symlinks, --id-key, --text-key and --metadata-keys "
                "go with a source (--files or --records)"
            )
        return None
    if given[0] == "mcp_tools":
        if record_flags or args.pattern is not None or follow:
            raise UsageError(
                "--mcp-tools takes no --id-key, --text-key, --metadata-keys, --pattern "
                "or --follow-symlinks (ids are server.tool; the metadata is fixed)"
            )
        return {"kind": "mcp_tools", "path": args.mcp_tools}
    if given[0] == "files":
        if record_flags:
            raise UsageError("--id-key, --text-key and --metadata-keys go with --records")
        entry: dict[str, Any] = {"kind": "files", "root": args.files}
        if args.pattern is not None:
            entry["pattern"] = args.pattern
        if follow:
            entry["follow_symlinks"] = True
    else:
        if args.pattern is not None or follow:
            raise UsageError("--pattern and --follow-symlinks go with --files")
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
    g.add_argument(
        "--mcp-tools",
        metavar="FILE",
        help="index a catalogue of MCP tools: a JSON list of tools (each with name, "
        "description, inputSchema and optionally server), or {server: [tools]}; "
        "ids are server.tool, only names and descriptions are embedded",
    )
    p.add_argument(
        "--pattern",
        metavar="REGEX",
        type=regex,
        help="with --files: regular expression searched in each relative path "
        r"(default: .md, .markdown, .txt and .rst files)",
    )
    p.add_argument(
        "--follow-symlinks",
        action="store_true",
        help="with --files: also index what symbolic links lead to outside FOLDER "
        "(default: such links are skipped, and rowvoi coverage lists them)",
    )
    p.add_argument("--id-key", metavar="KEY", help="with --records: the id field (default id)")
    p.add_argument(
        "--text-key", metavar="KEY", help="with --records: the text field (default text)"
    )
    p.add_argument(
        "--metadata-keys",
        metavar="K1,K2",
        type=name_list,
        help="with --records: fields to filter on (not embedded)",
    )
    p.add_argument(
        "--embedder",
        metavar="SPEC",
        type=embedder_spec,
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
        type=integer(1, INT_MAX),
        metavar="CHARS",
        help="chunk length in characters (default 1200)",
    )
    s.add_argument(
        "--overlap",
        type=integer(1, INT_MAX),
        metavar="CHARS",
        help="characters shared by consecutive chunks (default 200)",
    )
    s.add_argument(
        "--max-tokens",
        type=integer(1, INT_MAX),
        metavar="N",
        help="chunk by MiniLM tokens instead (250 fits the model)",
    )
    s.add_argument(
        "--fields",
        type=name_list,
        metavar="F1,F2",
        help="with --strategy fields: the record fields, in order",
    )
    s.add_argument(
        "--chunked-fields",
        type=name_list,
        metavar="F1,...",
        help="with --strategy fields: fields to chunk",
    )
    e = p.add_argument_group("links (the corpus's graph: rowvoi graph NAME ...)")
    e.add_argument(
        "--edge-fields",
        type=name_list,
        metavar="F[=TYPE],...",
        help="metadata fields naming other items, each an edge type: parent "
        "(PARENT), links and deps (REF), any other FIELD (FIELD upper-cased) "
        "or FIELD=TYPE; e.g. --edge-fields parent,links",
    )


def _edges_spec(args: argparse.Namespace) -> dict[str, Any] | None:
    """The edge extractor spec --edge-fields asks for (None: not given)."""

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
def _recipe_from_flags(
    name: str, args: argparse.Namespace, *, required: Literal[True]
) -> tuple[dict[str, Any], dict[str, Any] | None]: ...
@overload
def _recipe_from_flags(
    name: str, args: argparse.Namespace, *, required: bool
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]: ...
def _recipe_from_flags(
    name: str, args: argparse.Namespace, *, required: bool
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The recipe the flags ask for (keeping the registered entry's
    embedder and strategy unless the flags change them), validated but not
    stored: ``(entry in force, arguments of registry.register or None when
    the registered entry stands as it is)``."""

    entry = _entry_from_flags(args)
    old = registry.get(name)
    strategy = _strategy_spec(args)
    edges = _edges_spec(args)
    if entry is None:
        if required:
            raise UsageError(
                "give the source: --files FOLDER, --records FILE, --fetcher MODULE:ATTR "
                "or --mcp-tools FILE"
            )
        if old is None:
            return None, None
        if args.embedder is None and strategy is None and edges is None:
            return old, None
        entry = {k: v for k, v in old.items()}
    params = {k: v for k, v in entry.items() if k not in ("kind", "embedder", "strategy", "edges")}
    if edges is None and old is not None:
        edges = old.get("edges")
    if edges is not None:
        params["edges"] = edges
    embedder = args.embedder or (old or {}).get("embedder") or _pinned_spec(name) or "default"
    if strategy is None and old is not None and old.get("kind") == entry["kind"]:
        strategy = old.get("strategy")
    recipe = {"kind": entry["kind"], "embedder": embedder, "strategy": strategy, **params}
    made = registry.make_entry(name, **recipe)
    if old is not None and {k: v for k, v in old.items() if k != "maintenance"} == made:
        return old, None  # the same recipe: nothing to register
    return made, recipe


def _register(name: str, recipe: dict[str, Any]) -> dict[str, Any]:

    return registry.register(name, **recipe)


def _pinned_spec(name: str) -> str | None:
    """The embedder spec an existing corpus was built with (None if none)."""

    store = CorpusStore.local(name)
    if not store.exists():
        return None
    with store.snapshot() as snap:
        return snap.state.get("embedder_spec")


# ----------------------------------------------------------------- sharded


def _sharded_root(name: str) -> Any:
    """The root of NAME when it is a sharded corpus (rowvoi.dask), else None."""
    from rowvoi.corpus.storage.paths import corpus_dir

    root = corpus_dir(name)
    man = root / "sharded.json"
    return root if man.exists() or man.is_symlink() else None


def _dask() -> Any:
    """rowvoi.dask, or a clear error without the extra."""
    try:
        import rowvoi.dask as rd
    except ImportError as exc:
        raise CliError(
            f"sharded corpora need the dask extra: pip install 'rowvoi[dask]' ({exc})"
        ) from None
    return rd


def _client(address: str | None) -> Any:
    """A distributed.Client connected to ADDRESS (None: none)."""
    if address is None:
        return None
    _dask()
    try:
        from distributed import Client
    except ImportError as exc:
        raise CliError(
            f"--scheduler needs distributed: pip install 'rowvoi[dask]' ({exc})"
        ) from None
    try:
        return Client(address, timeout="10s")
    except (OSError, TimeoutError) as exc:
        raise CliError(f"cannot reach the Dask scheduler at {address}: {exc}") from None


def _open_any(name: str, scheduler: str | None = None) -> Any:
    """The corpus NAME: a sharded one (served on --scheduler's cluster, or in
    this process) or an ordinary one."""
    if _sharded_root(name) is not None:
        client = _client(scheduler)
        return _dask().open_sharded(name, client=client if client is not None else "local")
    if scheduler is not None:
        raise UsageError(f"--scheduler: corpus {name!r} is not sharded (built without --shards)")
    return kept_corpus(name)  # (the MCP server's calls find it open)


def _build_sharded(args: argparse.Namespace, entry: dict[str, Any]) -> int:
    """``rowvoi build NAME ... --shards N [--scheduler ADDRESS]``."""
    rd = _dask()
    root = _sharded_root(args.name)
    shards = args.shards
    if shards is None:
        shards = rd.open_sharded(args.name, client="local").shards
    client = _client(args.scheduler)
    source = registry.source_from_entry(args.name, entry)
    try:
        rep = rd.build_sharded(
            source,
            args.name,
            shards=shards,
            client=client if client is not None else "threads",
            full=not args.keep_missing,
            edges=extractor_from_spec(entry.get("edges")),
        )
    finally:
        if client is not None:
            client.close()
    del root
    if args.json:
        print_json({"corpus": args.name, "sharded": True, **rep.__dict__})
        return 0
    if not rep.changed_shards:
        print(
            f"sharded corpus {args.name!r} is up to date (generation {rep.generation}, "
            f"{shards} shards): {rep.n_artifacts} artifacts; {rep.seconds:.2f} s"
        )
        return 0
    changed = ", ".join(map(str, rep.changed_shards))
    print(
        f"built sharded corpus {args.name!r} (generation {rep.generation}, {shards} shards): "
        f"{rep.n_artifacts} artifacts, {rep.n_records} records; shards rebuilt: {changed}; "
        f"{rep.seconds:.2f} s"
    )
    return 0


def _info_sharded(args: argparse.Namespace) -> int:
    info = _open_any(args.name).info()
    if args.json:
        print_json(info)
        return 0
    print(f"sharded corpus {args.name!r}: {printable(info['root'])}")
    print(
        f"  generation {info['generation']}, {info['shards']} shards; "
        f"{info['n_artifacts']} artifacts, {info['n_records']} records"
    )
    print(f"  embedder: {printable(str(info['embedder_id']))}")
    for r in info["shard_info"]:
        print(
            f"  shard {r['shard']}: generation {r['generation']}, {r['n_artifacts']} "
            f"artifacts, {r['n_records']} records  {printable(r['path'])}"
        )
    return 0


# ------------------------------------------------------------------- verbs


def _cmd_build(args: argparse.Namespace) -> int:

    if args.repair:
        return _cmd_repair(args)
    if _entry_from_flags(args) is not None and args.records:
        # the flags are well formed; a FIFO or a device would hang the
        # build: refuse it before anything is registered
        check_input_file(args.records, "--records")
    if _entry_from_flags(args) is not None and args.mcp_tools:
        # a catalogue is one JSON document: the JSON size limit applies
        open_input(args.mcp_tools, "--mcp-tools", limit=MAX_JSON_BYTES).close()
    entry, recipe = _recipe_from_flags(args.name, args, required=False)
    if entry is None:
        raise CliError(
            f"corpus {args.name!r} is not registered: give its source "
            f"(rowvoi build {args.name} --files FOLDER, --records FILE or --mcp-tools FILE)"
        )
    if entry.get("kind") == "records" and entry.get("path"):
        check_input_file(entry["path"], "records file")
    if entry.get("kind") == "mcp_tools" and entry.get("path"):
        open_input(entry["path"], "tool catalogue", limit=MAX_JSON_BYTES).close()

    if args.shards is not None or (args.scheduler is not None) or _sharded_root(args.name):
        code = _build_sharded(args, entry)
        if recipe is not None:
            _register(args.name, recipe)
        return code
    progress = False if args.json else None
    # a new or changed recipe is registered once the build has committed (or
    # was interrupted: the next 'rowvoi build NAME' resumes it), so that a
    # build that fails -- a wrong folder, a fetcher that raised -- leaves the
    # registry as it was
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SkippedFileWarning)
        try:
            source = registry.source_from_entry(args.name, entry)
            corpus = build(
                source,
                full=not args.keep_missing,
                progress=progress,
                hnsw=args.hnsw,
                edges=extractor_from_spec(entry.get("edges")),
            )
        except KeyboardInterrupt:
            if recipe is not None:
                _register(args.name, recipe)
            raise
    for w in caught:
        if issubclass(w.category, SkippedFileWarning):
            print(f"{args.verb_parser.prog}: warning: {w.message}", file=sys.stderr)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if recipe is not None:
        _register(args.name, recipe)
    r = corpus.last_build
    skipped = (
        "; skipped "
        + ", ".join(f"{n} {why}" for why, n in r.skipped.items())
        + f" (rowvoi coverage {args.name} lists them)"
        if r.skipped
        else ""
    )
    if args.json:
        print_json({"corpus": args.name, "path": str(corpus.store.path), **r.to_dict()})
        return 0
    n = r.n_seen
    if not r.changed:
        print(
            f"corpus {args.name!r} is up to date (generation {r.generation}): {n} "
            f"artifact{'s' if n != 1 else ''} unchanged; nothing embedded"
            f"{skipped}; {r.seconds:.2f} s"
        )
        return 0
    extra = f"; rebuilt: {r.rebuild}" if r.rebuild and r.rebuild != "first build" else ""
    print(
        f"built corpus {args.name!r} (generation {r.generation}): {n} artifacts -- "
        f"{r.n_new} new, {r.n_changed} changed, {r.n_unchanged} unchanged, {r.n_deleted} "
        f"deleted; {r.records_added} records written, {r.texts_embedded} texts embedded "
        f"({r.cache_hits} from the cache){extra}"
        + (f"; {r.n_links} links" if r.n_links else "")
        + f"{skipped}; {r.seconds:.2f} s"
    )
    return 0


_NOT_WITH_REPAIR = (
    "shards",
    "scheduler",
    "files",
    "records",
    "fetcher",
    "mcp_tools",
    "pattern",
    "id_key",
    "text_key",
    "metadata_keys",
    "embedder",
    "strategy",
    "chunk_size",
    "overlap",
    "max_tokens",
    "fields",
    "chunked_fields",
    "edge_fields",
    "hnsw",
)


def _cmd_repair(args: argparse.Namespace) -> int:
    """``rowvoi build NAME --repair``: the index files rebuilt from the
    stored rows and the embedding cache (no source is read)."""

    given = [f for f in _NOT_WITH_REPAIR if getattr(args, f, None) is not None]
    if given or args.keep_missing:
        flag = "--" + (given[0] if given else "keep_missing").replace("_", "-")
        raise UsageError(
            f"--repair rebuilds the index files from the stored rows and reads no "
            f"source: it takes no {flag} (run rowvoi build {args.name} after it)"
        )
    r = repair(CorpusStore.local(args.name))
    if args.json:
        print_json({"corpus": args.name, **r.to_dict()})
        return 0
    if not r.repaired:
        print(
            f"corpus {args.name!r} needs no repair: every index file of generation "
            f"{r.generation} loads and matches its records; {r.seconds:.2f} s"
        )
        return 0
    print(
        f"repaired corpus {args.name!r} (generation {r.generation}): "
        + "; ".join(str(d) for d in r.damaged)
        + f" -- wrote {', '.join(r.files)} from {r.n_records} stored records; "
        f"{r.vectors_from_cache} vectors from the embedding cache, "
        f"{r.vectors_from_index} from the index, {r.texts_embedded} texts embedded; "
        f"{r.seconds:.2f} s"
    )
    return 0


def _cmd_register(args: argparse.Namespace) -> int:
    entry, recipe = _recipe_from_flags(args.name, args, required=True)
    if recipe is not None:
        entry = _register(args.name, recipe)
    if args.json:
        print_json({"corpus": args.name, **entry})
    else:
        where = printable(entry.get("root") or entry.get("path") or entry.get("fetcher"))
        print(
            f"registered {args.name!r}: {entry['kind']} from {where} (embedder "
            f"{entry['embedder']}); build it: rowvoi build {args.name}"
        )
    return 0


def _filter_document(text: str) -> dict[str, Any]:
    """``--filter``: JSON whose shape is a filter, whatever the corpus (a
    usage error otherwise, exit 2): an object; ``$and``/``$or`` holding
    non-empty lists of objects, nested at most
    :data:`rowvoi.query.MAX_FILTER_DEPTH` deep; operator names that exist.
    Whether its fields and values fit the corpus is the search's to say
    (exit 1).
    """

    example = '\'{"year": {"$gte": 1960}}\''
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--filter: not valid JSON ({exc.msg})") from None
    except RecursionError:
        raise UsageError("--filter: JSON nested too deeply") from None
    if not isinstance(doc, dict):
        raise UsageError(f"--filter: a filter is a JSON object, e.g. {example}")
    levels: list[tuple[Any, str, int]] = [(doc, "filter", 0)]  # (level, path, depth)
    while levels:
        level, path, depth = levels.pop()
        if not isinstance(level, dict):
            raise UsageError(f"--filter: {path} must be an object of conditions")
        for key, value in level.items():
            where = f"{path}.{key}"
            if key in ("$and", "$or"):
                if depth + 1 > MAX_FILTER_DEPTH:
                    raise UsageError(
                        f"--filter: {where}: $and/$or nested more than "
                        f"{MAX_FILTER_DEPTH} deep; flatten the filter"
                    )
                if not isinstance(value, list) or not value:
                    raise UsageError(f"--filter: {where} must be a non-empty list of objects")
                levels.extend((v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value))
            elif key.startswith("$"):
                raise UsageError(
                    f"--filter: {where}: a filter level holds field names, $and or $or"
                )
            elif isinstance(value, dict):
                unknown = [op for op in value if op not in OPERATORS or op in ("$and", "$or")]
                if unknown or not value:
                    raise UsageError(
                        f"--filter: {where}: a condition is a value or an object of "
                        f"operators ({' '.join(o for o in OPERATORS if o not in ('$and', '$or'))})"
                        + (f"; not {', '.join(map(repr, unknown))}" if unknown else "")
                    )
    return doc


def _cmd_search(args: argparse.Namespace) -> int:

    flt = None if args.filter is None else _filter_document(args.filter)
    corpus = _open_any(args.name, args.scheduler)
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
        **rerank_from_args(args),
    )
    if args.json:
        print_json(
            {
                "corpus": args.name,
                "query": args.query,
                "mode": args.mode,
                "fusion": args.fusion if args.mode == "hybrid" else None,
                "hits": [h.to_dict() for h in hits],
                "reason": hits.reason,
            }
        )
        return 0
    print_hits(hits)
    return 0


def _corpus_rows() -> list[dict[str, Any]]:

    names: set[str] = set(registry.registered())
    root = corpora_dir()
    if root.is_dir():
        names |= {
            p.name for p in root.iterdir() if is_corpus_dir(p) or (p / "sharded.json").is_file()
        }
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
        if _sharded_root(name) is not None:
            try:
                m = _dask().open_sharded(name, client="local").manifest
            except Exception as exc:  # noqa: BLE001 - one damaged corpus: listed, not fatal
                row["damaged"] = str(exc)
            else:
                row.update(
                    {
                        "built": True,
                        "shards": m["shards"],
                        "generation": m["generation"],
                        "n_artifacts": m["n_artifacts"],
                        "n_records": m["n_records"],
                        "embedder": m["embedder_id"],
                        "updated": m["published"],
                    }
                )
        elif store.exists():
            try:
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
            except IndexFormatError as exc:  # one damaged corpus: listed, not fatal
                row["damaged"] = str(exc)
        rows.append(row)
    return rows


def _cmd_ls(args: argparse.Namespace) -> int:
    rows = _corpus_rows()
    if args.json:
        print_json(rows)
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
                printable(r.get("embedder") or "-"),
                "DAMAGED (rowvoi info " + r["name"] + ")"
                if r.get("damaged")
                else time.strftime("%Y-%m-%d %H:%M", time.localtime(upd))
                if upd
                else "not built",
                printable(r.get("source") or "-"),
            )
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    for row in table:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip())
    return 0


def _cmd_info(args: argparse.Namespace) -> int:

    if _sharded_root(args.name) is not None:
        return _info_sharded(args)
    info = open_corpus(args.name).info(check=args.check)
    info["registry"] = registry.get(args.name)
    damaged = 1 if info["damage"] and args.check else 0
    if args.json:
        print_json(info)
        return damaged
    emb = info["embedder"]
    print(f"corpus {args.name!r}: {printable(info['path'])}")
    print(
        f"  generation {info['generation']} (index files of generation "
        f"{info['base_generation']}, {info['n_delta']} records added and "
        f"{info['n_tombstones']} removed since)"
    )
    print(
        f"  {info['n_artifacts']} artifacts, {info['n_records']} records; kinds: "
        + (", ".join(f"{printable(k)} {n}" for k, n in info["kinds"].items()) or "none")
    )
    print(f"  embedder: {printable(emb['id'])} ({emb['dim']} dimensions)")
    print(f"  strategy: {printable(info['strategy']['id'])}")
    if info.get("n_links") or info.get("edges"):
        print(f"  links: {info['n_links']} (extractor {(info.get('edges') or {}).get('id')})")
    fields = info["fields"]
    print(
        "  filter fields: "
        + (", ".join(f"{printable(n)} ({t})" for n, t in fields.items()) or "none")
    )
    print(f"  files: {len(info['files'])}, {info['bytes']:,} bytes")
    for name, size in info["files"].items():
        print(f"    {printable(name)}  {size:,}")
    if info["damage"]:
        print(f"  DAMAGED: {len(info['damage'])} file(s) -- repair: {info['repair']}")
        for d in info["damage"]:
            print(f"    {printable(d['file'])}: {printable(d['problem'])}")
    elif args.check:
        print("  checked: every index file loads and matches its records; docs.sqlite is sound")
    return damaged


def _cmd_rm(args: argparse.Namespace) -> int:

    store = CorpusStore.local(args.name)
    entry = registry.get(args.name)
    sharded = _sharded_root(args.name) is not None
    if not store.exists() and entry is None and not sharded:
        raise CliError(f"no corpus {args.name!r} (see rowvoi ls)")
    unregister = entry is not None and not args.keep_registration
    if unregister:
        forget(args.name)  # first: a live maintain run refuses it, nothing lost
    if sharded:
        _dask().remove_sharded(args.name)
    elif store.exists():
        remove_corpus(store)
    if unregister:
        registry.unregister(args.name)
    if args.json:
        print_json(
            {
                "removed": args.name,
                "data": store.path.exists() is False,
                "unregistered": unregister,
            }
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
    _add_build(sub)
    _add_register(sub)
    _add_search(sub)
    _add_ls(sub)
    _add_info(sub)
    _add_rm(sub)


def _add_build(sub: Any) -> None:
    """Add ``rowvoi build`` to the subparsers."""
    p = sub.add_parser(
        "build",
        help="build or update a corpus (incremental)",
        description="Build the corpus NAME, or bring it up to date: only new and changed "
        "items are embedded and indexed, items gone from the source are "
        "removed. Give the source the first time (--files or --records); it is "
        "registered once the build has committed, so later 'rowvoi build NAME' needs "
        "no flags; a first build that fails (a wrong folder, a fetcher that raised) "
        "leaves neither a corpus nor a registration behind, and a failed rebuild "
        "leaves the previous corpus as it was. Ctrl-C (exit 130) keeps the previous "
        "corpus and the vectors embedded so far: the next build resumes from them. "
        "A change of embedder or strategy rebuilds what it must. --repair rebuilds "
        "damaged or missing index files from the stored rows and the embedding "
        "cache, re-embedding nothing. Progress goes to stderr on a terminal. Exit 1 "
        "if the corpus is being built by another process or its index files are "
        "damaged (the message names the file and the repair).",
        epilog="example: rowvoi build notes --files ~/notes; rowvoi build papers --records "
        "papers.jsonl --id-key id --text-key abstract --metadata-keys year,venue; "
        "rowvoi build tools --mcp-tools tools.json",
    )
    p.add_argument(
        "name", metavar="NAME", type=corpus_name, help="corpus name (A-Z a-z 0-9 . _ -)"
    )
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
    p.add_argument(
        "--repair",
        action="store_true",
        help="rebuild damaged or missing index files from the stored rows and the "
        "embedding cache (re-embeds nothing; reads no source; takes no other flags)",
    )
    p.add_argument(
        "--shards",
        type=integer(1, 4096, "--shards"),
        metavar="N",
        help="build a sharded corpus of N shards on Dask (rowvoi[dask]); fixed once built "
        "(a sharded corpus is rebuilt as sharded without it)",
    )
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="with --shards: the Dask scheduler to run the shard builds on "
        "(tcp://host:8786; default: threads of this process)",
    )
    p.add_argument("--json", action="store_true", help="print the build report as JSON")
    p.set_defaults(func=_cmd_build, verb_parser=p)


def _add_register(sub: Any) -> None:
    """Add ``rowvoi register`` to the subparsers."""
    p = sub.add_parser(
        "register",
        help="record how to build a corpus, without building it",
        description="Register (or replace) the recipe of corpus NAME in corpora.json: its "
        "source, embedder and strategy. 'rowvoi build NAME' then builds it.",
    )
    p.add_argument("name", metavar="NAME", type=corpus_name)
    _add_source_args(p)
    p.add_argument("--json", action="store_true", help="print the entry as JSON")
    p.set_defaults(func=_cmd_register, verb_parser=p)


def _add_search(sub: Any) -> None:
    """Add ``rowvoi search`` to the subparsers."""
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
    p.add_argument("name", metavar="NAME", type=corpus_name)
    p.add_argument("query", metavar="QUERY")
    p.add_argument(
        "--k",
        type=search_k(),
        default=10,
        help=f"hits to show, 1 .. {MAX_FETCH_K} (default 10)",
    )
    p.add_argument(
        "--mode",
        choices=MODES,
        default="dense",
        metavar="{dense,lexical,hybrid}",
        help="ranking (default dense)",
    )
    p.add_argument(
        "--fusion",
        choices=FUSIONS,
        default="rrf",
        metavar="{rrf,blend}",
        help="hybrid fusion: rrf (by rank, default) or blend (by score)",
    )
    p.add_argument("--filter", metavar="JSON", help="a filter over the filter fields")
    p.add_argument("--surfaces", type=name_list, metavar="K1,K2", help="only these surface kinds")
    p.add_argument(
        "--index",
        choices=INDEXES,
        default="auto",
        metavar="{auto,flat,hnsw}",
        help="vector index: the HNSW graph when the corpus has one (auto), or exact search (flat)",
    )
    add_rerank_args(p)
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="a sharded corpus: serve its shards on this Dask scheduler's workers "
        "(default: in this process)",
    )
    p.add_argument(
        "--explain",
        action="store_true",
        help="with --json: each query term's BM25 contribution per hit",
    )
    p.add_argument("--json", action="store_true", help="print JSON for programs")
    p.set_defaults(func=_cmd_search, verb_parser=p)


def _add_ls(sub: Any) -> None:
    """Add ``rowvoi ls`` to the subparsers."""
    p = sub.add_parser(
        "ls", help="list corpora", description="List the built and registered corpora."
    )
    p.add_argument("--json", action="store_true", help="print JSON for programs")
    p.set_defaults(func=_cmd_ls, verb_parser=p)


def _add_info(sub: Any) -> None:
    """Add ``rowvoi info`` to the subparsers."""
    p = sub.add_parser(
        "info",
        help="describe a corpus",
        description="Describe corpus NAME: counts, surface kinds, filter "
        "fields and their types, embedder, strategy, files and "
        "bytes on disk, and any index file found missing or misplaced, with the "
        "command that repairs it. Loads no model and no index, unless --check: "
        "then every index file is loaded and verified (checksums, structure, the "
        "records it holds) and docs.sqlite checked, and damage found exits 1.",
    )
    p.add_argument("name", metavar="NAME", type=corpus_name)
    p.add_argument(
        "--check",
        action="store_true",
        help="verify every index file and docs.sqlite (loads the indexes); exit 1 if damaged",
    )
    p.add_argument("--json", action="store_true", help="print JSON for programs")
    p.set_defaults(func=_cmd_info, verb_parser=p)


def _add_rm(sub: Any) -> None:
    """Add ``rowvoi rm`` to the subparsers."""
    p = sub.add_parser(
        "rm",
        help="delete a corpus",
        description="Delete the built data of corpus NAME and its "
        "registration. Exit 1 if it is being built.",
    )
    p.add_argument("name", metavar="NAME", type=corpus_name)
    p.add_argument(
        "--keep-registration",
        action="store_true",
        help="keep its recipe in corpora.json (rebuild it with rowvoi build NAME)",
    )
    p.add_argument("--json", action="store_true", help="print JSON for programs")
    p.set_defaults(func=_cmd_rm, verb_parser=p)
