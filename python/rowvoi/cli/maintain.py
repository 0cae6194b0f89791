"""The ``rowvoi maintain`` and ``rowvoi coverage`` verbs.

:func:`add_parsers` registers them on the main parser's subparsers. Each
verb returns an exit code and raises the CLI's errors (or a library error,
which :func:`rowvoi.cli.main.main` maps to exit 1): 0 done (``maintain``: every
corpus up to date or built), 1 a failure (an unknown corpus, another run in
progress, a corpus whose check or build failed, a corpus with damaged index
files -- ``--force`` repairs it), 2 a malformed argument
(neither or both of NAME and ``--all``, a policy that does not parse).

Examples
--------
>>> import os, tempfile, pathlib, contextlib, io
>>> os.environ["ROWVOI_HOME"] = tempfile.mkdtemp()
>>> notes = pathlib.Path(tempfile.mkdtemp()); _ = (notes / "wing.md").write_text("Lift")
>>> from rowvoi.cli.main import main
>>> with contextlib.redirect_stdout(io.StringIO()):
...     rc = main(["register", "notes", "--files", str(notes), "--embedder", "hashing"])
>>> with contextlib.redirect_stdout(io.StringIO()) as out:
...     rc = main(["maintain", "--all"])
>>> rc, out.getvalue().splitlines()[0].startswith("notes: built (never built)")
(0, True)
>>> with contextlib.redirect_stdout(io.StringIO()) as out:
...     rc = main(["maintain", "--all"])
>>> rc, out.getvalue().splitlines()
(0, ['notes: nothing to do (source unchanged)', 'nothing to do: every corpus is up to date'])
>>> del os.environ["ROWVOI_HOME"]
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rowvoi.cli._common import (
    CliError,
    UsageError,
    corpus_name,
    maintenance_policy,
    print_json,
    printable,
)
from rowvoi.corpus.maintenance import registry, runs

__all__ = ["add_parsers"]

_SHOW = 10  # paths listed per coverage category in text output


def _result_line(r: Any) -> str:
    line = f"{r.name}: {r.action} ({printable(r.reason)})"
    if r.error:
        line += f": {printable(r.error)}"
    c = r.counts
    if c:
        line += (
            f" -- {c['n_new']} new, {c['n_changed']} changed, {c['n_deleted']} deleted; "
            f"{c['texts_embedded']} texts embedded; generation {c['generation']}"
        )
    return line + (f"; {r.seconds:.2f} s" if r.ran else "")


def _cmd_maintain(args: argparse.Namespace) -> int:
    if args.set_policy is not False:
        if args.name is None or args.all or args.dry_run or args.force or args.log:
            raise UsageError("--set-policy goes with one NAME and nothing else")
        policy = runs.set_policy(args.name, args.set_policy)
        if args.json:
            print_json({"corpus": args.name, "policy": policy.to_dict(), "spec": policy.to_spec()})
        else:
            print(f"corpus {args.name!r}: maintenance policy {policy.to_spec()}")
        return 0
    if args.log:
        if args.name is None or args.all or args.dry_run or args.force:
            raise UsageError("--log goes with one NAME and nothing else")
        if registry.get(args.name) is None and not runs.maintenance_log(args.name):
            raise CliError(f"corpus {args.name!r} is not registered and has no maintenance log")
        rows = runs.maintenance_log(args.name)
        if args.json:
            print_json({"corpus": args.name, "log": rows})
        else:
            for row in rows:
                print(
                    f"{row['time']}  {row['action']}  ({printable(row['reason'])})"
                    + (f": {printable(row['error'])}" if row.get("error") else "")
                )
        return 0
    if (args.name is None) == (not args.all):
        raise UsageError("give a corpus NAME or --all (not both)")
    progress = False if args.json else None
    report = runs.maintain(
        args.name, all=args.all, dry_run=args.dry_run, force=args.force, progress=progress
    )
    if args.json:
        print_json(report.to_dict())
    else:
        if report.took_over_lock_of:
            print(
                f"took over the lock of a dead run (process {report.took_over_lock_of})",
                file=sys.stderr,
            )
        if not report.results:
            print("no registered corpora: register one with rowvoi register NAME --files FOLDER")
        for r in report:
            print(_result_line(r))
        if report.results and report.nothing_to_do:
            print("nothing to do: every corpus is up to date")
        elif args.dry_run:
            print("dry run: nothing was built or recorded")
    if report.errors:
        names = ", ".join(r.name for r in report.errors)
        print(f"rowvoi maintain: {len(report.errors)} corpus(es) failed: {names}", file=sys.stderr)
        return 1
    return 0


def _cmd_coverage(args: argparse.Namespace) -> int:
    r = runs.coverage(args.name)
    if args.json:
        print_json(r.to_dict())
        return 0
    c = r.counts()

    def paths(items: list[str]) -> str:
        shown = ", ".join(printable(p) for p in items[:_SHOW])
        more = len(items) - _SHOW
        return shown + (f", ... and {more} more (--json lists all)" if more > 0 else "")

    print(f"corpus {r.name!r}: {printable(r.root)} (pattern {printable(r.pattern)})")
    print(f"  on disk       {c['on_disk']:>6}")
    print(f"  indexed       {c['indexed']:>6}  (coverage {100 * r.coverage_ratio:.1f}%)")
    print(f"  pending       {c['pending']:>6}  {paths(r.pending)}".rstrip())
    why = ", ".join(f"{printable(k)} {len(v)}" for k, v in r.excluded.items())
    print(f"  excluded      {c['excluded']:>6}  ({why})")
    for k, v in r.excluded.items():
        if v:
            print(f"    {printable(k):<11} {paths(v)}")
    print(f"  excluded dirs {c['excluded_dirs']:>6}  {paths(r.excluded_dirs)}".rstrip())
    print(f"  missing       {c['missing']:>6}  {paths(r.missing)}".rstrip())
    print(f"  out of scope  {c['out_of_scope']:>6}  {paths(r.out_of_scope)}".rstrip())
    if c["pending"] or c["missing"] or c["out_of_scope"]:
        print(f"run 'rowvoi maintain {r.name}' (or rowvoi build {r.name}) to catch up")
    return 0


def add_parsers(sub: Any) -> None:
    """Register ``maintain`` and ``coverage`` on the ``rowvoi`` subparsers.

    >>> import argparse
    >>> sub = argparse.ArgumentParser(prog="rowvoi").add_subparsers()
    >>> add_parsers(sub); sorted(sub.choices)
    ['coverage', 'maintain']
    """
    _add_maintain(sub)
    _add_coverage(sub)


def _add_maintain(sub: Any) -> None:
    """Add ``rowvoi maintain`` to the subparsers."""
    p = sub.add_parser(
        "maintain",
        help="rebuild registered corpora whose policy says so",
        description="Bring registered corpora up to date by their maintenance policy: "
        "on_source_change (default for files and records files: rebuild when "
        "files changed, found by size, mtime and hash against the index), "
        "interval:DURATION (default interval:24h for --fetcher corpora, whose "
        "check calls the fetcher: code execution), or manual (only when named). "
        "A corpus never built, or whose registration changed, is built. A "
        "second run right after finds nothing to do and says so. One run at a "
        "time: a concurrent run is refused (exit 1); a dead run's lock is taken "
        "over. Each run is logged per corpus (see --log). Builds show progress "
        "on stderr when it is a terminal. A corpus whose index files are damaged "
        "is reported with the command that repairs it, and not built; --force "
        "repairs it first (from its stored rows and embedding cache, re-embedding "
        "nothing). Exit 1 if any corpus failed or is damaged (the others are "
        "still maintained).",
        epilog="examples: rowvoi maintain --all; rowvoi maintain notes --dry-run; rowvoi "
        "maintain papers --set-policy interval:6h; cron, hourly: "
        "0 * * * * rowvoi maintain --all >> ~/.rowvoi-maintain.log 2>&1",
    )
    p.add_argument(
        "name", metavar="NAME", nargs="?", type=corpus_name, help="one registered corpus"
    )
    p.add_argument(
        "--all", action="store_true", help="every registered corpus (manual ones are skipped)"
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="say what would be built; build, record and lock nothing",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="build whatever the policy says (still incremental); repair damaged "
        "index files first",
    )
    p.add_argument(
        "--set-policy",
        metavar="POLICY",
        type=maintenance_policy,
        default=False,
        help="store NAME's policy and exit: on_source_change, manual, "
        "interval:DURATION (units s m h d w, e.g. interval:6h), or default",
    )
    p.add_argument("--log", action="store_true", help="print NAME's maintenance log and exit")
    p.add_argument("--json", action="store_true", help="print JSON for programs")
    p.set_defaults(func=_cmd_maintain, verb_parser=p)


def _add_coverage(sub: Any) -> None:
    """Add ``rowvoi coverage`` to the subparsers."""
    p = sub.add_parser(
        "coverage",
        help="which files of a files corpus are indexed, and why not",
        description="Compare the folder of files corpus NAME with its index: files on "
        "disk, indexed, pending (in the source, not yet indexed), excluded (by "
        "pattern, binary content, hidden name; excluded directories are not "
        "walked), missing (indexed, gone from disk) and out of scope (indexed, "
        "no longer matching). Loads no model and no index. Exit 1 for an "
        "unknown corpus or one that is not a files corpus.",
        epilog="example: rowvoi coverage notes --json",
    )
    p.add_argument("name", metavar="NAME", type=corpus_name)
    p.add_argument("--json", action="store_true", help="print JSON (every path)")
    p.set_defaults(func=_cmd_coverage, verb_parser=p)
