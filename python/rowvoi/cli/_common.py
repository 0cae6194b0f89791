"""What every verb of the ``rowvoi`` command shares: the floor of
:mod:`rowvoi.cli`. Every verb module imports this one and no other part of
the command line; this module imports no verb module.

* **The exit-code rule** (:data:`EXIT_RULE`, printed at the end of
  ``rowvoi --help`` and copied word for word into the README) and the two
  errors that pick a code: :class:`CliError` (1) and :class:`UsageError` (2).
  :func:`rowvoi.cli.main.main` is the one place that turns them, library
  errors and ``KeyboardInterrupt`` into exit codes.
* **Argument types** for argparse's ``type=``, all of them: numbers and
  integers in a range (:func:`number`, :func:`integer`, the named ones such
  as :data:`FRACTION`, and :func:`search_k`), lists of them, corpus names,
  regular expressions, embedder specs, maintenance policies, metric names.
  A value they refuse is a usage error (exit 2) that names the option and
  what it wants. Each type carries ``rejects``, inputs it must refuse, so
  the test that sweeps every verb can try them on every option that uses
  it. The number and list types also carry ``json_schema``, the JSON
  Schema of what they accept, derived from the same bounds: what ``rowvoi
  mcp`` (:mod:`rowvoi.cli.mcp`) advertises for the option before the type
  itself checks the value.
* **Human output** is escaped (:func:`printable`; :class:`EscapingWriter`
  stands in front of ``sys.stdout`` while a verb runs): a terminal control
  sequence in a file name, id, text or message is shown as a visible escape
  (``\\x1b[31m``), never sent raw to the terminal. :func:`print_hits`
  prints search hits. **JSON output** (:func:`print_json`, ``--json``) is
  never escaped: :func:`json.dumps` already writes control characters as
  JSON escapes, so it stays exact.
* **Reading the files a user names** (:func:`open_input`,
  :func:`read_input_text`, :func:`check_input_file`, :func:`read_json`):
  only regular files are read (a FIFO, a device such as ``/dev/zero``, a
  socket or a directory is refused at once, exit 1), and JSON documents and
  standard input stop at :data:`MAX_JSON_BYTES`; options that take JSON
  inline or in a file (:func:`json_argument`, :func:`parse_costs`).

This module loads nothing of rowvoi when it is imported (a type that needs
the library imports it when it runs), so that :func:`rowvoi.cli.main.main`
is running, and turns a Ctrl-C into exit 130, before the verb modules load
the library.

Examples
--------
>>> printable("report\\x1b[2J.md")
'report\\\\x1b[2J.md'
>>> k = integer(1, 100)
>>> k("7")
7
>>> k("0")
Traceback (most recent call last):
...
argparse.ArgumentTypeError: must be an integer in 1 .. 100, got '0'
"""

from __future__ import annotations

import argparse
import json
import math
import numbers
import os
import re
import stat
import sys
import unicodedata
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rowvoi.corpus import SearchHit

__all__ = [
    "rerank_spec",
    "add_rerank_args",
    "rerank_from_args",
    "EXIT_OK",
    "EXIT_FAILURE",
    "EXIT_USAGE",
    "EXIT_INTERRUPTED",
    "EXIT_RULE",
    "MAX_JSON_BYTES",
    "MAX_ANSWER_CHARS",
    "INT_MAX",
    "CliError",
    "UsageError",
    "number",
    "integer",
    "number_list",
    "name_list",
    "regex",
    "corpus_name",
    "corpus_names",
    "embedder_spec",
    "maintenance_policy",
    "metric_names",
    "FRACTION",
    "WEIGHT",
    "REL",
    "PROBABILITY",
    "SECONDS",
    "BUDGET",
    "FINITE",
    "COUNT",
    "search_k",
    "printable",
    "EscapingWriter",
    "print_json",
    "json_value",
    "proof",
    "snippet",
    "print_hits",
    "open_input",
    "read_input_text",
    "check_input_file",
    "read_json",
    "json_argument",
    "PLAIN",
    "split_list",
    "parse_number",
    "parse_costs",
]

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

#: The exit-code rule of every verb, stated once: the epilog of ``rowvoi
#: --help`` (and so of the man page) and, word for word, the README's
#: "Exit codes" paragraph (``tests/python/test_cli_rules.py`` compares them).
EXIT_RULE = (
    "Exit codes, the same for every verb: 0 success; 1 a well-formed request "
    "that fails (a file that is missing, unreadable or not a regular file, "
    "data that do not fit the request, an unknown, empty or busy corpus, an "
    "impossible key or cover, input that ends before 'ask' finds a row); 2 a "
    "malformed request, wrong whatever the data (an unknown verb, flag or "
    "choice; a number that does not parse or is out of range; a corpus name, "
    "spec, pattern or JSON that does not parse, has the wrong shape or nests "
    "too deeply); 130 interrupted (Ctrl-C), whatever the verb was doing. "
    "Errors are one line on stderr, 'rowvoi VERB: error: ...'."
)

#: Largest JSON document (a --costs/--prior file, SUPPORT.json,
#: ANSWERS.json, QUERY.json, SCHEMA.json) and largest standard input read.
MAX_JSON_BYTES = 64 * 1024 * 1024

#: Longest answer line ``rowvoi ask`` reads from standard input.
MAX_ANSWER_CHARS = 65536

#: Upper bound of the integer flags that count things (chunk sizes, edge
#: budgets, depths): larger values mean nothing and would overflow C sizes.
INT_MAX = 2**31 - 1


class CliError(Exception):
    """A well-formed request that failed: exit code 1."""


class UsageError(Exception):
    """A malformed request: exit code 2.

    ``parser`` is the (sub)parser whose usage line to print; ``None`` means
    the parser of the verb being run.
    """

    def __init__(self, message: str, parser: argparse.ArgumentParser | None = None) -> None:
        super().__init__(message)
        self.parser = parser


# ------------------------------------------------------------ argument types
def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else f"{x:g}"


def _range_text(
    low: float | None, high: float | None, low_open: bool, high_open: bool, integer: bool
) -> str:
    """ "an integer in 1 .. 100", "a number in (0, 1]", "an integer >= 0"."""
    kind = "an integer" if integer else "a number"
    if low is not None and high is not None:
        if integer:
            return f"{kind} in {_fmt(low)} .. {_fmt(high)}"
        return f"{kind} in {'(' if low_open else '['}{_fmt(low)}, {_fmt(high)}{')' if high_open else ']'}"
    if low is not None:
        return f"{kind} {'>' if low_open else '>='} {_fmt(low)}"
    if high is not None:
        return f"{kind} {'<' if high_open else '<='} {_fmt(high)}"
    return kind if integer else "a finite number"


def number(
    what: str | None = None,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    integer: bool = False,
) -> Callable[[str], Any]:
    """An argparse ``type=`` accepting a finite number (an ``int`` with
    ``integer``) within the bounds; ``what`` names it in the error
    ("a fraction in [0, 1]"; default: the range in words).

    Text that is not a number, NaN, an infinity or a value out of range is
    an ``argparse.ArgumentTypeError``: a usage error, exit 2.

    >>> number("a fraction in [0, 1]", low=0.0, high=1.0)("0.25")
    0.25
    >>> number(low=0.0, low_open=True)("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a number > 0, got '0'

    ``json_schema`` states the same bounds in JSON Schema:

    >>> number(low=0.0, low_open=True, high=1.0).json_schema
    {'type': 'number', 'exclusiveMinimum': 0.0, 'maximum': 1.0}
    """
    what = what or _range_text(low, high, low_open, high_open, integer)

    def parse(text: str) -> Any:
        try:
            value: Any = int(text) if integer else float(text)
        except (ValueError, OverflowError):
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None
        inside = (
            (integer or math.isfinite(value))
            and (low is None or (value > low if low_open else value >= low))
            and (high is None or (value < high if high_open else value <= high))
        )
        if not inside:
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
        return value

    bad = ["x", "nan", "inf", "1e999"]
    if integer:
        bad.append("1.5")
    if low is not None:
        bad.append(_fmt(low) if low_open else _fmt(low - 1 if integer else low - 0.5))
    if high is not None:
        bad.append(_fmt(high) if high_open else _fmt(high + 1 if integer else high + 0.5))
    parse.__name__ = what
    parse.rejects = tuple(bad)  # type: ignore[attr-defined]
    schema: dict[str, Any] = {"type": "integer" if integer else "number"}
    if low is not None:
        schema["exclusiveMinimum" if low_open else "minimum"] = low
    if high is not None:
        schema["exclusiveMaximum" if high_open else "maximum"] = high
    parse.json_schema = schema  # type: ignore[attr-defined]
    return parse


def integer(low: int | None = None, high: int | None = None, what: str | None = None) -> Any:
    """An argparse ``type=`` accepting an integer in ``low .. high``
    (see :func:`number`).

    >>> integer(0)("3")
    3
    >>> integer(1, 10)("11")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be an integer in 1 .. 10, got '11'
    """
    return number(what, low=low, high=high, integer=True)


def number_list(
    element: Callable[[str], Any], *, none: bool = False, what: str | None = None
) -> Callable[[str], list[Any]]:
    """An argparse ``type=`` for a comma-separated list whose items each
    pass ``element`` (a :func:`number` type); ``none`` also allows the word
    ``none`` (a missing value). At least one item.

    >>> number_list(integer(1))("1,5,10")
    [1, 5, 10]
    """
    name = getattr(element, "__name__", "a value")
    what = what or f"comma-separated values, each {name}" + (" or none" if none else "")

    def parse(text: str) -> list[Any]:
        out: list[Any] = []
        for item in (t.strip() for t in text.split(",")):
            if not item:
                continue
            if none and item.lower() == "none":
                out.append(None)
                continue
            try:
                out.append(element(item))
            except argparse.ArgumentTypeError:
                raise argparse.ArgumentTypeError(
                    f"must be {what}; {item!r} is not {name}"
                ) from None
        if not out:
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
        return out

    parse.__name__ = what
    parse.rejects = (",",) + tuple(  # type: ignore[attr-defined]
        f"1,{r}" if "," not in r else r for r in getattr(element, "rejects", ("x",))
    )
    return parse


def name_list(text: str) -> list[str]:
    """An argparse ``type=``: a comma-separated list of names, at least one.

    >>> name_list("a, b,,c")
    ['a', 'b', 'c']
    """
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise argparse.ArgumentTypeError(f"expected a comma-separated list, got {text!r}")
    return items


name_list.rejects = (",", "")  # type: ignore[attr-defined]
name_list.json_schema = {  # type: ignore[attr-defined]
    "type": "array",
    "items": {"type": "string", "minLength": 1},
    "minItems": 1,
}


def regex(text: str) -> str:
    """An argparse ``type=``: a regular expression that compiles.

    >>> regex(r"\\.md$")
    '\\\\.md$'
    """
    try:
        re.compile(text)
    except re.error as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a regular expression: {exc}") from None
    return text


regex.__name__ = "a regular expression"
regex.rejects = ("(", "[a-")  # type: ignore[attr-defined]


def corpus_name(text: str) -> str:
    """An argparse ``type=``: a valid corpus name (whether the corpus exists
    is the verb's to say: exit 1).

    >>> corpus_name("notes-2")
    'notes-2'
    """
    from rowvoi.corpus.storage.paths import check_name

    try:
        return check_name(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


corpus_name.__name__ = "a corpus name"
corpus_name.rejects = ("bad name", ".hidden", "a/b", "x" * 129)  # type: ignore[attr-defined]


def corpus_names(text: str) -> list[str]:
    """An argparse ``type=``: NAME[,NAME...], each a valid corpus name.

    >>> corpus_names("notes,wiki")
    ['notes', 'wiki']
    """
    return [corpus_name(n) for n in name_list(text)]


corpus_names.__name__ = "corpus names"
corpus_names.rejects = (",", "notes,bad name", "../x")  # type: ignore[attr-defined]
corpus_names.json_schema = name_list.json_schema  # type: ignore[attr-defined]


def embedder_spec(text: str) -> str:
    """An argparse ``type=``: an embedder spec (``minilm``, ``hashing``,
    ``hashing:DIM``), checked without loading anything.

    >>> embedder_spec("hashing:64")
    'hashing:64'
    """
    from rowvoi.corpus.embedders import check_spec

    try:
        return check_spec(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


embedder_spec.__name__ = "an embedder spec"
embedder_spec.rejects = ("word2vec", "hashing:0", "hashing:x")  # type: ignore[attr-defined]


def maintenance_policy(text: str) -> Any:
    """An argparse ``type=``: a maintenance policy spec
    (:func:`rowvoi.corpus.maintenance.policy.policy_from_spec`), or ``default``
    (``None``: the default policy of the corpus's kind).

    >>> maintenance_policy("interval:6h").to_spec()
    'interval:6h'
    >>> maintenance_policy("default") is None
    True
    """
    from rowvoi.corpus.maintenance.policy import policy_from_spec

    if text == "default":
        return None
    try:
        return policy_from_spec(text)
    except (TypeError, ValueError) as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


maintenance_policy.__name__ = "a maintenance policy"
maintenance_policy.rejects = ("sometimes", "interval:", "interval:-1h")  # type: ignore[attr-defined]


def metric_names(text: str) -> list[str]:
    """An argparse ``type=``: names of :data:`rowvoi.corpus.eval.METRICS`,
    comma-separated.

    >>> metric_names("ndcg,recall")
    ['ndcg', 'recall']
    """
    from rowvoi.corpus.eval import METRICS

    names = name_list(text)
    unknown = [m for m in names if m not in METRICS]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown metric(s) {', '.join(map(repr, unknown))}; choose from " + ", ".join(METRICS)
        )
    return names


metric_names.__name__ = "metric names"
metric_names.rejects = (",", "ndcg,bleu")  # type: ignore[attr-defined]
metric_names.json_schema = name_list.json_schema  # type: ignore[attr-defined]

#: The named numbers of the verbs' options (one definition each).
FRACTION = number("a fraction in [0, 1]", low=0.0, high=1.0)
WEIGHT = number(low=0.0, high=1.0)
REL = number("a number in (0, 1]", low=0.0, low_open=True, high=1.0)
PROBABILITY = number("a probability in [0, 1)", low=0.0, high=1.0, high_open=True)
SECONDS = number("a number of seconds > 0", low=0.0, low_open=True)
BUDGET = number("a finite number >= 0", low=0.0)
FINITE = number()  # any finite number (a score)
COUNT = integer(0)


def search_k() -> Any:
    """The argparse ``type=`` of a number of hits a search retrieves
    (``--k``, ``--depth``): an integer in 1 ..
    :data:`rowvoi.corpus.retrieval.rank.MAX_FETCH_K`.

    >>> search_k()("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be an integer in 1 .. 100000, got '0'
    """
    from rowvoi.corpus.retrieval.rank import MAX_FETCH_K

    return integer(1, MAX_FETCH_K)


def rerank_spec(text: str) -> str:
    """The argparse ``type=`` of ``--rerank``: ``cross-encoder``,
    ``cross-encoder:FOLDER``, ``claude`` or ``claude:MODEL`` (checked
    here, loaded when the search runs: :func:`add_rerank_args`).

    >>> rerank_spec("claude:claude-sonnet-4-6")
    'claude:claude-sonnet-4-6'
    >>> rerank_spec("bm25")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected cross-encoder, cross-encoder:FOLDER, claude or claude:MODEL, got 'bm25'
    """
    head, _, tail = text.partition(":")
    if head not in ("cross-encoder", "claude") or (_ and not tail):
        raise argparse.ArgumentTypeError(
            f"expected cross-encoder, cross-encoder:FOLDER, claude or claude:MODEL, got {text!r}"
        )
    return text


rerank_spec.rejects = ("bm25", "claude:", "cross-encoder:", "")  # type: ignore[attr-defined]


def add_rerank_args(p: argparse.ArgumentParser) -> None:
    """Add ``--rerank SPEC`` and ``--rerank-text`` to a search verb."""
    p.add_argument(
        "--rerank",
        type=rerank_spec,
        metavar="SPEC",
        help="rerank the candidates: cross-encoder[:FOLDER] (an ONNX cross-encoder "
        "export; FOLDER or $ROWVOI_CROSS_ENCODER), or claude[:MODEL] (needs "
        "rowvoi[claude] and ANTHROPIC_API_KEY)",
    )
    p.add_argument(
        "--rerank-text",
        choices=("surface", "artifact"),
        default="surface",
        metavar="{surface,artifact}",
        help="what the reranker reads: the matched surface (default) or the whole artifact",
    )


def rerank_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The ``rerank`` keywords of a search from ``--rerank``/``--rerank-text``
    (``{}`` without ``--rerank``). CliError when the reranker cannot be
    made here (its message says what to install or provide)."""
    spec = getattr(args, "rerank", None)
    if spec is None:
        return {}
    try:
        if spec == "claude" or spec.startswith("claude:"):
            from rowvoi.rag.claude_search import ClaudeReranker

            model = spec.partition(":")[2]
            reranker: Any = ClaudeReranker(**({"model": model} if model else {}))
        else:
            from rowvoi.corpus.retrieval.rerank import resolve_reranker

            reranker = resolve_reranker(spec)
    except (ImportError, ValueError) as exc:
        raise CliError(f"--rerank {spec}: {exc}") from exc
    return {"rerank": reranker, "rerank_text": args.rerank_text}


# ------------------------------------------------------------------ output
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape_char(ch: str) -> str:
    code = ord(ch)
    if ch in _NAMED:
        return _NAMED[ch]
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def printable(value: object, *, keep: str = "") -> str:
    """``value`` as text that is safe to show on a terminal.

    Every character that is not printable is replaced by a visible escape
    in Python's notation (``\\x1b``, ``\\n``, ``\\u202e``, ``\\udcff``): C0
    and C1 controls (so terminal escape sequences cannot act), DEL, line
    and paragraph separators, format characters such as bidirectional
    overrides, surrogates (from undecodable file names), private-use and
    unassigned code points. Printable text, spaces of every kind included,
    is returned unchanged; backslashes are not doubled. ``keep`` lists
    characters to leave as they are (``"\\n"`` for a block of lines).

    Every human (non-``--json``) output path of the ``rowvoi`` command goes
    through this function; ``--json`` output never does.

    >>> printable("ok.md"), printable("\\x1b[31mred"), printable("a\\nb", keep="\\n")
    ('ok.md', '\\\\x1b[31mred', 'a\\nb')
    >>> printable("x\\u202ey \\udcff")
    'x\\\\u202ey \\\\udcff'
    """
    text = value if isinstance(value, str) else str(value)
    if text.isprintable():
        return text
    return "".join(
        ch
        if ch in keep or ch.isprintable() or unicodedata.category(ch) == "Zs"
        else _escape_char(ch)
        for ch in text
    )


class EscapingWriter:
    """A text stream that writes :func:`printable` text (line breaks kept)
    to another stream: :func:`rowvoi.cli.main` puts one in front of
    ``sys.stdout`` for human output, so nothing a verb prints can reach the
    terminal raw. Stateless per character, so writes may split text
    anywhere. (A plain object, not an ``io`` stream: it has no finaliser
    that could run, and swallow a Ctrl-C, when it is dropped.)

    >>> import io
    >>> out = io.StringIO(); w = EscapingWriter(out)
    >>> _ = w.write("id \\x1b]0;pwned\\x07\\n"); out.getvalue()
    'id \\\\x1b]0;pwned\\\\x07\\n'
    """

    def __init__(self, raw: IO[str]) -> None:
        self.raw = raw

    def write(self, s: str) -> int:
        """Write ``s`` escaped; returns ``len(s)``, as a text stream does."""
        self.raw.write(printable(s, keep="\n"))
        return len(s)

    def flush(self) -> None:
        """Flush the stream written to."""
        self.raw.flush()

    def isatty(self) -> bool:
        """Whether the stream written to is a terminal."""
        return bool(self.raw.isatty())

    def fileno(self) -> int:
        """The descriptor of the stream written to."""
        return self.raw.fileno()

    @property
    def encoding(self) -> str:
        """The encoding of the stream written to."""
        return str(getattr(self.raw, "encoding", None) or "utf-8")


def open_named(name: str) -> Any:
    """The corpus NAME for the search verbs: a sharded corpus
    (:func:`rowvoi.dask.open_sharded`, served in this process) when its
    folder holds one, else NAME itself (the verbs open it)."""
    from rowvoi.corpus.storage.paths import corpus_dir

    man = corpus_dir(name) / "sharded.json"
    if not (man.exists() or man.is_symlink()):
        return name
    try:
        import rowvoi.dask as rd
    except ImportError as exc:
        raise CliError(
            f"corpus {name!r} is sharded and needs the dask extra: pip install 'rowvoi[dask]' "
            f"({exc})"
        ) from None
    return rd.open_sharded(name, client="local")


def print_json(doc: Any, indent: int | None = None) -> None:
    """Print ``doc`` as one JSON document: the ``--json`` output of every
    verb (exact, never escaped: :func:`json.dumps` escapes control
    characters itself).

    >>> print_json({"key": ["a"], "cost": 1.5})
    {"key": ["a"], "cost": 1.5}
    """
    print(json.dumps(doc, indent=indent))


def json_value(v: Any) -> Any:
    """A label made JSON-friendly: numpy scalars as Python numbers, other
    objects that JSON cannot hold as their text.

    >>> import numpy as np
    >>> json_value(np.int64(3)), json_value("a"), json_value(("a", 1))
    (3, 'a', "('a', 1)")
    """
    if hasattr(v, "item") and callable(v.item):
        try:
            return v.item()
        except (ValueError, TypeError):
            pass
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    return str(v)


def proof(strategy: str, optimal: bool, timed_out: bool = False) -> str:
    """Name the solver and say whether its answer is proven optimal.

    >>> proof("exact", True), proof("greedy", False)
    ('exact (proven optimal)', 'greedy (not proven optimal)')
    """
    if optimal:
        return f"{strategy} (proven optimal)"
    if timed_out:
        return f"{strategy} (time limit reached; not proven optimal)"
    return f"{strategy} (not proven optimal)"


def snippet(text: str, width: int = 96) -> str:
    """The text on one line (whitespace runs made one space), escaped
    (:func:`printable`), cut to ``width`` characters.

    >>> snippet("Lift  and\\ndrag\\x07", width=12)
    'Lift and ...'
    """
    one = printable(" ".join(text.split()))
    return one if len(one) <= width else one[: width - 3] + "..."


def print_hits(hits: Sequence[SearchHit], note: Callable[[SearchHit], str] | None = None) -> None:
    """One hit per two lines (rank, score, id, kind, ``note(hit)``; the
    snippet), then its pointer; ``(no hits)`` for none, with the reason a
    :class:`~rowvoi.corpus.SearchHits` gives (``(no hits: REASON)``).
    Everything taken from the corpus is escaped (:func:`printable`).

    >>> print_hits([])
    (no hits)
    """
    if not hits:
        reason = getattr(hits, "reason", None)
        print("(no hits)" if not reason else f"(no hits: {printable(reason)})")
    for rank, h in enumerate(hits, 1):
        extra = f"  {printable(note(h))}" if note is not None else ""
        print(
            f"{rank:3d}  {h.score:8.4f}  {printable(h.artifact_id)}  "
            f"[{printable(h.surface_kind)}]{extra}"
        )
        print(f"     {snippet(h.text)}")
        if h.pointer:
            print(f"     {printable(h.pointer)}")


# ------------------------------------------------------------- input files
_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def open_input(path: str, what: str = "", *, limit: int | None = None) -> IO[bytes]:
    """Open a file named on the command line for reading, in binary.

    The file is opened without blocking (a FIFO with no writer does not
    hang the open) and checked on the open descriptor, so what is read is
    what was checked: anything but a regular file (a directory, FIFO,
    device such as ``/dev/zero``, socket) is refused, and so is a file
    larger than ``limit`` bytes. ``what`` prefixes the messages (an option
    name such as ``--costs``).

    Raises
    ------
    CliError
        A missing, unreadable, non-regular or too large file (exit 1).

    >>> import tempfile; p = tempfile.mkdtemp()
    >>> open_input(p)
    Traceback (most recent call last):
    ...
    rowvoi.cli._common.CliError: ... is a directory; give a regular file
    """
    where = f"{what}: {path}" if what else path
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise CliError(f"{where}: no such file") from None
    except OSError as exc:
        raise CliError(f"{where}: cannot open: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise CliError(f"{where} is {_kind(st.st_mode)}; give a regular file")
        if limit is not None and st.st_size > limit:
            raise CliError(
                f"{where} is {st.st_size:,} bytes, more than the {limit:,} bytes "
                "rowvoi reads from such a file"
            )
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _read_stdin(where: str, limit: int) -> bytes:
    stream = getattr(sys.stdin, "buffer", None)
    if stream is not None:
        data = stream.read(limit + 1)
    else:  # a text stream standing in for stdin (tests)
        data = sys.stdin.read(limit + 1).encode("utf-8", "surrogateescape")
    if len(data) > limit:
        raise CliError(f"{where}: standard input holds more than {limit:,} bytes")
    return bytes(data)


def read_input_text(path: str, what: str = "", *, limit: int | None = None) -> str:
    """The UTF-8 text of a file named on the command line (``-``: standard
    input), at most ``limit`` bytes (default :data:`MAX_JSON_BYTES`); see
    :func:`open_input`.

    Raises
    ------
    CliError
        As :func:`open_input`; standard input longer than ``limit``.
    UsageError
        Text that is not UTF-8 (the argument is malformed).
    """
    where = f"{what}: {path}" if what else path
    if limit is None:
        limit = MAX_JSON_BYTES
    if path == "-":
        data = _read_stdin(where, limit)
    else:
        with open_input(path, what, limit=limit) as f:
            try:
                data = f.read(limit + 1)
            except OSError as exc:
                raise CliError(f"{where}: cannot read: {exc.strerror or exc}") from None
        if len(data) > limit:  # grew while being read
            raise CliError(f"{where} holds more than {limit:,} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{where} is not UTF-8 text: {exc}") from None


def check_input_file(path: str, what: str = "") -> None:
    """Refuse (:class:`CliError`) a file named on the command line that a
    library function will read, unless it is a regular file: the check
    :func:`open_input` makes, for paths handed on by name.
    """
    open_input(path, what).close()


def read_json(path: str, option: str = "") -> Any:
    """A JSON document in a file named on the command line.

    A file that is missing, unreadable, not a regular file or larger than
    :data:`MAX_JSON_BYTES` fails the request (exit 1); text that is not
    JSON, or nests too deeply, is a malformed argument (exit 2).

    >>> read_json("/nonexistent.json", "--costs")
    Traceback (most recent call last):
    ...
    rowvoi.cli._common.CliError: --costs: /nonexistent.json: no such file
    """
    where = f"{option}: {path}" if option else path
    text = read_input_text(path, option)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{where} is not valid JSON: {exc}") from None
    except RecursionError:
        raise UsageError(f"{where}: JSON nested too deeply") from None


#: :func:`json_argument`'s answer when the value is in the option's plain syntax.
PLAIN = object()


def json_argument(option: str, text: str) -> Any:
    """The JSON an option value holds: inline (it starts with ``{`` or
    ``[``) or in a file (a name ending in .json, or an existing path);
    :data:`PLAIN` when it is neither and the caller parses its plain syntax.

    >>> json_argument("--costs", '{"a": 2}'), json_argument("--costs", "a=2") is PLAIN
    ({'a': 2}, True)
    """
    if text.lstrip()[:1] in ("{", "["):
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{option}: {text!r} is not valid JSON: {exc}") from None
        except RecursionError:
            raise UsageError(f"{option}: JSON nested too deeply") from None
    if text.endswith(".json") or Path(text).exists():
        return read_json(text, option)  # a FIFO, device or folder is refused there
    return PLAIN


def split_list(text: str) -> list[str]:
    """The items of a comma-separated list, stripped; empty items dropped.

    >>> split_list(" a, b,,c ")
    ['a', 'b', 'c']
    """
    return [t.strip() for t in text.split(",") if t.strip()]


def parse_number(option: str, what: str, value: Any, *, text: bool) -> float:
    """A number from a spec: text that parses as one (``text=True``, the
    plain syntax) or a JSON number; anything else is a usage error.

    >>> parse_number("--prior", "weight 1", "2.5", text=True)
    2.5
    """
    if text and isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            raise UsageError(f"{option}: {what} is {value!r}, which is not a number") from None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise UsageError(f"{option}: {what} is {value!r}, which is not a number")
    return float(value)


def parse_costs(
    text: str | None, item: str = "column", option: str = "--costs"
) -> dict[Hashable, float] | None:
    """``name=cost,...``, a JSON object inline or in a file; every cost a
    finite number >= 0 (0: free; anything else is a usage error).

    >>> parse_costs("name=2,plan=0")
    {'name': 2.0, 'plan': 0.0}
    """
    if text is None:
        return None
    data = json_argument(option, text)
    if data is not PLAIN:
        if not isinstance(data, dict):
            raise UsageError(f"{option}: {text} must hold a JSON object of {item} -> cost")
        pairs: list[tuple[str, Any]] = [(str(k), v) for k, v in data.items()]
    else:
        pairs = []
        for entry in split_list(text):
            name, eq, val = entry.rpartition("=")
            if not eq or not name.strip():
                raise UsageError(f"{option}: {entry!r} is not {item}=cost")
            pairs.append((name.strip(), val.strip()))
        if not pairs:
            raise UsageError(f"{option} {text!r} names no costs")
    out: dict[Hashable, float] = {}
    for name, val in pairs:
        cost = parse_number(option, f"the cost of {name!r}", val, text=data is PLAIN)
        if not (math.isfinite(cost) and cost >= 0):
            raise UsageError(
                f"{option}: the cost of {name!r} is {cost:g}; costs must be finite numbers "
                ">= 0 (0 for a free column)"
            )
        cost += 0.0  # -0 -> 0
        out[name] = cost
    return out
