"""The ``rowvoi`` command: the parser and the one place that runs a verb.

:func:`build_parser` composes the parser from the verb modules, each of
which registers its own subparsers (``add_parsers(sub)``), in the order
``rowvoi --help`` lists them; :func:`main` runs the verb and applies one
exit-code rule to every verb, stated once, in
:data:`rowvoi.cli._common.EXIT_RULE` (the end of ``rowvoi --help``, the man
page and the README):

* **0** -- success.
* **1** -- a well-formed request that fails: a file that does not exist,
  cannot be read or is not a regular file, data that do not fit the request
  (a column, row or chunk the data do not have), an unknown or empty corpus,
  an impossible key, an infeasible cover, input that ends before ``rowvoi
  ask`` has found a row.
* **2** -- a malformed request, wrong whatever the data say: an unknown
  verb, flag or choice (``--mode fuzzy``); a number that does not parse, is
  not finite or is out of range (``--k -1``, a negative budget, an epsilon
  outside [0, 1]); a corpus name, ``--costs``/``--prior``/``--rows`` spec,
  pattern or JSON that does not parse, does not have the documented shape
  or nests too deeply, given inline or in a file named on the command line.
* **130** -- interrupted (Ctrl-C), wherever the interrupt lands.

Each error is one line on stderr, ``rowvoi VERB: error: ...``; a usage
error (2) prints the verb's usage line before it, as argparse does. Human
output is escaped (:func:`rowvoi.cli._common.printable`: while a verb runs,
its stdout goes through an :class:`~rowvoi.cli._common.EscapingWriter`,
and warnings are shown escaped); ``--json`` output is exact.

Examples
--------
>>> main(["--version"])
rowvoi ...
0
>>> args = build_parser().parse_args(["key", "t.csv", "--strategy", "exact"])
>>> args.command, args.strategy
('key', 'exact')
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import NoReturn

from rowvoi import __version__
from rowvoi.cli._common import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_RULE,
    EXIT_USAGE,
    CliError,
    EscapingWriter,
    UsageError,
    printable,
)
from rowvoi.errors import RvError

__all__ = ["main", "build_parser"]


class _Parser(argparse.ArgumentParser):
    """argparse whose errors raise :class:`UsageError` instead of exiting, so
    that :func:`main` reports every error, and picks every exit code, in one
    place. Subparsers inherit the class."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message, self)


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``rowvoi`` command: the top level, then
    each verb module adds its verbs, in the order ``rowvoi --help`` lists
    them."""
    # The verb modules load the library (the corpus stack, numpy): imported
    # here, so that a Ctrl-C while they load is main's to report (exit 130).
    from rowvoi.cli import (
        calibrate,
        corpus,
        discover,
        evaluate,
        graph,
        maintain,
        mcp,
        query,
        rag,
        tables,
    )

    parser = _Parser(
        prog="rowvoi",
        description="Value of information over candidate rows: which columns settle "
        "which row is meant, and in what order to ask them.",
        epilog=EXIT_RULE,
    )
    parser.add_argument("--version", action="version", version=f"rowvoi {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    tables.add_parsers(sub)  # key, path, ask
    rag.add_parsers(sub)  # context, question
    query.add_parsers(sub)  # query
    corpus.add_parsers(sub)  # build, register, search, ls, info, rm
    maintain.add_parsers(sub)  # maintain, coverage
    evaluate.add_parsers(sub)  # eval, eval-select, sweep-select
    graph.add_parsers(sub)  # graph NAME neighbours|walk|text
    discover.add_parsers(sub)  # discover
    calibrate.add_parsers(sub)  # calibrate
    mcp.add_parsers(sub)  # mcp: serves the verbs above as tools, so last
    return parser


def _report(parser: argparse.ArgumentParser, code: int, message: str) -> int:
    """Print one error line (after the usage line for a usage error) and
    return the exit code: the one place that writes errors. The message is
    escaped (it may quote a file name or a value)."""
    if code == EXIT_USAGE:
        parser.print_usage(sys.stderr)
    print(f"{parser.prog}: error: {printable(message)}", file=sys.stderr, flush=True)
    return code


_format_warning = warnings.formatwarning


def _escaped_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    line: str | None = None,
) -> str:
    """``warnings.formatwarning`` while a verb runs: the usual text, escaped."""
    text = _format_warning(message, category, filename, lineno, line)
    return printable(text.rstrip("\n"), keep="\n") + "\n"


@contextmanager
def _human_output(human: bool) -> Iterator[None]:
    """While a verb runs: its stdout escaped unless it prints JSON, and
    warnings shown escaped (see :func:`rowvoi.cli._common.printable`)."""
    saved, formatter = sys.stdout, warnings.formatwarning
    warnings.formatwarning = _escaped_warning
    if human:
        sys.stdout = EscapingWriter(saved)
    try:
        yield
    finally:
        sys.stdout, warnings.formatwarning = saved, formatter


def _run(argv: Sequence[str] | None, where: list[argparse.ArgumentParser]) -> int:
    """:func:`main` without its last resort: parse, run, map errors to codes.
    ``where[0]`` follows the parser of the verb, for the messages."""
    parser = build_parser()
    where[:] = [parser]
    try:
        args, extra = parser.parse_known_args(argv)
        where[:] = [args.verb_parser]
        if extra:
            raise UsageError(f"unrecognized arguments: {' '.join(extra)}")
        with _human_output(not getattr(args, "json", False)):
            return int(args.func(args))
    except SystemExit as exc:  # --help and --version
        return exc.code if isinstance(exc.code, int) else EXIT_OK
    except UsageError as exc:
        return _report(exc.parser or where[0], EXIT_USAGE, str(exc))
    except BrokenPipeError:
        return EXIT_OK
    except (
        CliError,
        RvError,
        ValueError,
        TypeError,
        KeyError,
        OSError,
        RuntimeError,
        MemoryError,
    ) as exc:
        msg = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
        return _report(where[0], EXIT_FAILURE, msg)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``rowvoi`` command; returns the exit code.

    The rule (:data:`rowvoi.cli._common.EXIT_RULE`): 0 ok; 1 a well-formed
    request that fails; 2 a malformed request (usage); 130 interrupted --
    a ``KeyboardInterrupt`` wherever it lands, building the parser,
    parsing, running the verb or reporting an error.
    """
    where: list[argparse.ArgumentParser] = []
    try:
        return _run(argv, where)
    except KeyboardInterrupt:
        prog = where[0].prog if where else "rowvoi"
        try:
            print(f"{prog}: interrupted", file=sys.stderr, flush=True)
        except (KeyboardInterrupt, OSError):
            pass  # a second Ctrl-C, or no stderr: the exit code says it
        return EXIT_INTERRUPTED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
