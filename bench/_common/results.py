"""Results files: where a run writes, what its header says, and the blocks a
suite replaces in a file that several runs share.

A suite writes ``bench/results/NAME.md`` (and, beside it, any ``NAME*.json``
or pictures it makes); a ``--quick`` run writes the same names under
``bench/results/quick/``, which git ignores, so a quick look never replaces
a committed full run.  Every results file opens with (or every block of one
carries) the run's provenance: the command, the machine line
(:func:`.machine.machine_line`), the versions of rowvoi and of the peers,
and the date -- never a machine path (``tests/python/test_bench_results.py``
checks the committed files).

Standard library only at import time (``python -m bench list`` needs no
numpy); writing a file goes through rowvoi's atomic writer.
"""

from __future__ import annotations

import atexit
import datetime
import importlib.metadata
import os
import platform
import re
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .machine import git_commit, host_tag, machine_line

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "results"
#: Where ``--quick`` runs write (ignored by git).
QUICK = RESULTS / "quick"
#: Caches of generated data sets and model outputs (ignored by git).
CACHE = ROOT / "bench" / ".cache"


def shown_arg(arg: str) -> str:
    """``arg`` as a results file may show it: a path inside the repository
    becomes relative to its root, any other absolute path ``<path>``
    (``--opt=/abs/path`` keeps its option)."""
    key, eq, val = arg.partition("=") if arg.startswith("--") else ("", "", arg)
    if val.startswith(("/", "~")):
        p = Path(val).expanduser().resolve()
        val = str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else "<path>"
    return f"{key}{eq}{val}"


def command(script: str, argv: Sequence[str]) -> str:
    """The command line to write in a results file, with no machine paths:
    ``python SCRIPT ARGS`` with every argument through :func:`shown_arg`."""
    return " ".join(["python", script, *(shown_arg(a) for a in argv)])


def version_of(dist: str) -> str | None:
    """The installed version of distribution ``dist`` (None when absent)."""
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def versions(*dists: str, peers: Mapping[str, str | None] | None = None) -> dict[str, str]:
    """rowvoi (with this checkout's commit), Python and the distributions
    ``dists`` installed in this interpreter (absent ones left out), then the
    ``peers`` (name -> version, as reported by their own interpreters;
    ``None`` values left out) under ``"peer "`` keys."""
    out = {"rowvoi": f"{version_of('rowvoi') or 'not installed'} (commit {git_commit()})"}
    out["Python"] = platform.python_version()
    for d in dists:
        v = version_of(d)
        if v is not None:
            out[d] = v
    for name, v in (peers or {}).items():
        if v is not None:
            out[f"peer {name}"] = str(v)
    return out


def versions_line(v: Mapping[str, str]) -> str:
    """``"rowvoi 0.1.0 (commit ...), Python 3.11.7, numpy 2.4.0; peers: ir 0.1.61"``."""
    own = [f"{k} {x}" for k, x in v.items() if not k.startswith("peer ")]
    peers = [f"{k[5:]} {x}" for k, x in v.items() if k.startswith("peer ")]
    return ", ".join(own) + (f"; peers: {', '.join(peers)}" if peers else "; no peer")


def now() -> str:
    """The date and time of a run, UTC, to the minute."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


@dataclass(frozen=True)
class Run:
    """One run of a suite, as the runner started it: what the suite needs to
    name its results files and write their provenance.

    ``shown`` is the suite's arguments as the user gave them (the command a
    results file shows); the suite parses the arguments the runner passes
    to its ``main`` (for ``--quick``, the suite's quick arguments first).
    """

    suite: str
    shown: tuple[str, ...] = ()
    quick: bool = False
    results_dir: Path = RESULTS
    date: str = field(default_factory=now)
    #: the machine line when the run started (its load average then)
    machine: str = field(default_factory=machine_line)
    #: bench/c program name -> its executable, built by the runner
    c_benches: Mapping[str, Path] = field(default_factory=dict)

    @property
    def command(self) -> str:
        """``python -m bench run NAME [--quick] ARGS``, machine paths hidden."""
        return command(
            f"-m bench run {self.suite}" + (" --quick" if self.quick else ""), self.shown
        )

    #: ``"_avx512"`` on a host with AVX-512, else ``""`` (:func:`.machine.host_tag`)
    host: str = field(default_factory=host_tag)

    @property
    def out(self) -> Path:
        """``NAME.md`` in the results folder of this run (``NAME_avx512.md``
        on a host with AVX-512: each host's results are kept)."""
        return self.path(f"{self.suite}.md")

    def path(self, name: str) -> Path:
        """A file named ``name`` beside :attr:`out` (e.g. ``NAME.json``), with
        the host's tag before its extension (``NAME_avx512.json``)."""
        if not self.host:
            return self.results_dir / name
        stem, dot, ext = name.rpartition(".")
        return self.results_dir / (f"{stem}{self.host}.{ext}" if dot else name + self.host)

    def header(self, v: Mapping[str, str]) -> list[str]:
        """The provenance of a results file as a list: command, machine,
        versions (``v``, from :func:`versions`), date; then a blank line."""
        return [
            f"- command: `{self.command}`",
            f"- machine: {self.machine} at the start (shared with other jobs)",
            f"- versions: {versions_line(v)}",
            f"- date: {self.date}",
            "",
        ]

    def provenance(self, v: Mapping[str, str]) -> str:
        """The same provenance as one sentence, for a block of a shared file."""
        return (
            f"Produced by `{self.command}` on {self.machine} at the start (shared with "
            f"other jobs); {versions_line(v)}; {self.date}."
        )


def scratch_dir(prefix: str) -> str:
    """A new private folder (``tempfile.mkdtemp``) for what a run builds --
    its corpora, indexes and files -- removed when the process exits,
    however the run ends (the corpora of a latency run take hundreds of
    MB)."""
    d = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, d, True)
    return d


def write(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` to ``path`` atomically (folders made as needed)."""
    from rowvoi._atomic import atomic_write_bytes

    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(p, text.encode("utf-8"))
    return p


def publish(path: str | os.PathLike[str], lines: Sequence[str]) -> Path:
    """A suite's results, one line each: printed, and written to ``path``
    (:func:`write`) ending with a newline."""
    text = "\n".join(lines).rstrip("\n") + "\n"
    print(text, end="")
    return write(path, text)


def _marker(tag: str, name: str, end: str) -> str:
    return f"<!-- {tag}:{name}:{end} -->"


def blocks(text: str, tag: str) -> dict[str, str]:
    """The blocks of ``tag`` in ``text``: name -> the text between its markers."""
    pat = re.compile(
        re.escape(f"<!-- {tag}:")
        + r"(\w+):begin -->\n(.*?)\n?"
        + re.escape(f"<!-- {tag}:")
        + r"\1:end -->",
        re.S,
    )
    return {m.group(1): m.group(2) for m in pat.finditer(text)}


def replace_block(text: str, tag: str, name: str, body: str, *, order: Sequence[str] = ()) -> str:
    """``text`` (a results file shared by several runs) with the block
    ``name`` -- the lines between ``<!-- TAG:NAME:begin -->`` and
    ``<!-- TAG:NAME:end -->`` -- replaced by ``body``; everything outside
    the block is kept.  A new block goes after the last block present that
    comes before it in ``order`` (else before the first that comes after
    it, else at the end)."""
    begin, end = _marker(tag, name, "begin"), _marker(tag, name, "end")
    block = f"{begin}\n{body.rstrip()}\n{end}"
    if begin in text and end in text:
        a, b = text.index(begin), text.index(end) + len(end)
        return text[:a] + block + text[b:]
    present = blocks(text, tag)
    if name in order:
        i = order.index(name)
        before = [n for n in order[:i] if n in present]
        after = [n for n in order[i + 1 :] if n in present]
        if before:
            at = text.index(_marker(tag, before[-1], "end")) + len(_marker(tag, before[-1], "end"))
            return text[:at] + "\n\n" + block + text[at:]
        if after:
            at = text.index(_marker(tag, after[0], "begin"))
            return text[:at] + block + "\n\n" + text[at:]
    return text.rstrip("\n") + "\n\n" + block + "\n"


def update_blocks(
    path: str | os.PathLike[str],
    tag: str,
    new: Mapping[str, str],
    *,
    head: str,
    order: Sequence[str] = (),
) -> str:
    """Write the results file ``path`` with the blocks in ``new`` replaced
    or added (:func:`replace_block`); a missing file starts from ``head``.
    Returns the new text."""
    p = Path(path)
    text = p.read_text(encoding="utf-8") if p.exists() else head.rstrip("\n") + "\n"
    for name, body in new.items():
        text = replace_block(text, tag, name, body, order=order)
    write(p, text.rstrip("\n") + "\n")
    return text
