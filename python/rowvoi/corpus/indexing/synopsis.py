"""Synopses: one written summary surface per artifact, made at build time.

An artifact whose own text says little about what it is for -- a tool
described as ``"Versions."``, a package with no description -- is hard to
find by meaning. :func:`with_synopsis` wraps any indexing strategy so each
artifact also gets one ``synopsis`` surface: a short text written by a
:data:`Synthesizer` (a language model, a template, any function) from the
artifact. The synopsis is searched like any surface, and it is one of the
summary kinds :func:`rowvoi.graph.collapsed_tree_policy` routes on (a query
matching the synopsis is led to the artifact's best chunk). The cost is
paid at build time; a search costs nothing more.

Paying only where it helps
    ``when=`` gates synthesis per artifact: ``"always"`` (default) or a
    :data:`Predicate` ``Artifact -> bool``. The synthesizer is called, and
    a synopsis surface added, only where it is true.
    :func:`make_thin_description_predicate` is the usual gate: artifacts
    whose description is empty or short, whose own text carries no topic.
Identity and staleness
    A synopsis is derived state, so its maker is part of the corpus's
    strategy id: ``synthesizer_id`` (a prompt or model change must change
    it) and ``when_id`` (the gate's identity) fold into
    :attr:`SynopsisStrategy.strategy_id`. A build under a changed id
    re-decomposes every artifact, but a synopsis is *carried over* from the
    corpus when it was made by the same synthesizer id from the same
    artifact (the surface's metadata holds ``synthesizer_id`` and the
    digest of the artifact it read, ``synopsis_input``). So a new
    ``synthesizer_id`` re-synthesizes every gated artifact, a new gate
    synthesizes only the artifacts it newly admits (and drops the synopses
    of those it no longer admits), and an artifact that changed is
    re-synthesized on the incremental build that re-indexes it -- unless
    what the synthesizer reads (its id and payload) is unchanged. A callable
    has no stable identity of its own, so ``with_synopsis`` requires an id:
    ``synthesizer_id=`` or a ``synthesizer_id`` attribute (the shipped
    Claude synthesizer has one), ``when_id=`` or a ``when_id`` attribute
    (the thin-description predicates have one).
When a synthesizer fails
    An exception (or a reply that is not a string) for one artifact never
    fails the build: that artifact is indexed without a synopsis and a
    :class:`SynopsisWarning` names it and the error. An empty reply means
    "no synopsis" and is skipped silently; an empty synopsis is never
    stored. The artifact gets its synopsis on the next build that
    re-indexes it (it changes, or the strategy id changes). A gate that
    raises propagates: it is your code, and a wrong gate is a bug.

A synopsis strategy is not a shipped strategy, so a registered corpus cannot
store it as a spec: build such corpora from Python.

Examples
--------
>>> from rowvoi.corpus import Artifact, Capability, CorpusStore, build, from_mapping, search
>>> def expand(artifact):
...     return "release versions planned for a project" if artifact.id == "versions" else ""
>>> strat = with_synopsis(Capability(), synthesize=expand, synthesizer_id="expand-v1",
...                       when=make_thin_description_predicate(min_chars=20))
>>> docs = {"versions": {"description": "Versions."},
...         "create_issue": {"description": "Create an issue in a project tracker"}}
>>> corpus = build(from_mapping(docs, strategy=strat, embedder="hashing"),
...                store=CorpusStore.memory(), progress=False)
>>> [(h.artifact_id, h.surface_kind) for h in search(corpus, "planned releases", mode="lexical")]
[('versions', 'synopsis')]
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rowvoi.corpus.base import Artifact, IndexPlan, Surface
from rowvoi.corpus.indexing.strategy import strategy_id, text_of

__all__ = [
    "Synthesizer",
    "Predicate",
    "SynopsisStrategy",
    "SynopsisWarning",
    "with_synopsis",
    "make_thin_description_predicate",
    "thin_description_predicate",
    "synopsis_input_digest",
    "SYNOPSIS_KIND",
    "ALWAYS",
    "DFLT_THIN_DESCRIPTION_CHARS",
]

#: ``Artifact -> str``: an artifact's synopsis (``""`` for none).
Synthesizer = Callable[[Artifact], str]
#: ``Artifact -> bool``: whether to synthesize for the artifact.
Predicate = Callable[[Artifact], bool]

#: The surface kind synopses are indexed under (a summary kind of
#: :func:`rowvoi.graph.collapsed_tree_policy`).
SYNOPSIS_KIND = "synopsis"
#: ``when`` value meaning "synthesize for every artifact" (the default).
ALWAYS = "always"
#: Descriptions shorter than this many characters (whitespace ignored) are
#: thin by default.
DFLT_THIN_DESCRIPTION_CHARS = 40


class SynopsisWarning(UserWarning):
    """A synthesizer failed for one artifact, which was indexed without a
    synopsis (the build went on).

    >>> issubclass(SynopsisWarning, UserWarning)
    True
    """


def _check_id(name: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise TypeError(f"{name} must be a non-empty str, not {value!r}")
    return value


def make_thin_description_predicate(
    *, min_chars: int = DFLT_THIN_DESCRIPTION_CHARS, field: str = "description"
) -> Predicate:
    """A :data:`Predicate` true when the artifact's ``field`` is empty or thin.

    Reads ``artifact.raw[field]`` of a mapping payload (a missing field is
    empty); a payload that is not a mapping is judged by its whole text.
    Thin means fewer than ``min_chars`` characters once whitespace is
    removed. The predicate carries a ``when_id``
    (``"thin_description(field=..., min_chars=...)"``) that
    :func:`with_synopsis` folds into the strategy id, so a new threshold
    re-gates the corpus on the next build.

    Raises
    ------
    TypeError, ValueError
        ``min_chars`` not an integer >= 1; ``field`` not a non-empty str.

    Examples
    --------
    >>> thin = make_thin_description_predicate(min_chars=10)
    >>> thin(Artifact(id="a", raw={"name": "a", "description": ""}))
    True
    >>> thin(Artifact(id="b", raw={"name": "b", "description": "Tools to parse dates"}))
    False
    >>> thin.when_id
    'thin_description(field=description, min_chars=10)'
    """
    from rowvoi import _validate as _v

    limit = _v.integer("min_chars", min_chars, 1)
    key = _check_id("field", field)

    def thin_description(artifact: Artifact) -> bool:
        raw = artifact.raw
        text = text_of(raw.get(key) if isinstance(raw, Mapping) else raw)
        return len("".join(text.split())) < limit

    thin_description.when_id = f"thin_description(field={key}, min_chars={limit})"  # type: ignore[attr-defined]
    return thin_description


#: Ready-made gate: a ``description`` shorter than
#: :data:`DFLT_THIN_DESCRIPTION_CHARS` characters, or none.
thin_description_predicate: Predicate = make_thin_description_predicate()


def synopsis_input_digest(artifact_id: str, raw: Any) -> str:
    """The digest of what a synthesizer reads: the artifact's id and
    payload (canonical JSON; bytes decoded as UTF-8; other objects by their
    ``str``). A synopsis is carried over to a new build only when this is
    unchanged.

    >>> synopsis_input_digest("a", {"x": 1, "y": 2}) == synopsis_input_digest("a", {"y": 2, "x": 1})
    True
    >>> synopsis_input_digest("a", "t") == synopsis_input_digest("b", "t")
    False
    """

    def plain(value: Any) -> Any:
        if isinstance(value, (bytes, bytearray)):
            return bytes(value).decode("utf-8", "replace")
        return str(value)

    blob = json.dumps([artifact_id, raw], sort_keys=True, default=plain, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


class SynopsisStrategy:
    """An indexing strategy plus one synopsis surface per gated artifact
    (made by :func:`with_synopsis`; see the module notes).

    The synopsis comes first in the plan (``surface_index`` 0), the inner
    strategy's surfaces follow unchanged, and its filter fields are the
    inner strategy's. ``derived_kinds`` and :meth:`decompose_with_prior`
    are what the build uses to carry stored synopses over.

    Thread-safety: holds only its settings; ``decompose`` is as thread-safe
    as the synthesizer and the gate.
    """

    def __init__(
        self,
        strategy: Any,
        synthesize: Synthesizer,
        synthesizer_id: str,
        synopsis_kind: str,
        when: Predicate | None,
        when_id: str,
    ) -> None:
        self.strategy = strategy
        self.synthesize = synthesize
        self.synthesizer_id = synthesizer_id
        self.synopsis_kind = synopsis_kind
        self.when = when
        self.when_id = when_id
        #: surface kinds whose stored records a build offers back to
        #: :meth:`decompose_with_prior`
        self.derived_kinds: tuple[str, ...] = (synopsis_kind,)

    @property
    def strategy_id(self) -> str:
        """``with_synopsis(<inner id>, synthesizer=..., kind=..., when=...)``."""
        return (
            f"with_synopsis({strategy_id(self.strategy)}, synthesizer="
            f"{json.dumps(self.synthesizer_id)}, kind={json.dumps(self.synopsis_kind)}, "
            f"when={json.dumps(self.when_id)})"
        )

    def __repr__(self) -> str:
        return (
            f"with_synopsis({self.strategy!r}, synthesizer_id={self.synthesizer_id!r}, "
            f"synopsis_kind={self.synopsis_kind!r}, when_id={self.when_id!r})"
        )

    def decompose(self, artifact_id: str, raw: Any) -> IndexPlan:
        """The inner plan, with a synopsis surface first where ``when`` holds."""
        return self.decompose_with_prior(artifact_id, raw, ())

    def decompose_with_prior(
        self, artifact_id: str, raw: Any, prior: Sequence[Surface]
    ) -> IndexPlan:
        """:meth:`decompose`, reusing a stored synopsis from ``prior`` (the
        artifact's stored surfaces of :attr:`derived_kinds`) when it was
        made by this synthesizer id from the same input; the synthesizer is
        called only otherwise."""
        plan: IndexPlan = self.strategy.decompose(artifact_id, raw)
        artifact = Artifact(artifact_id, raw)
        if self.when is not None and not self.when(artifact):
            return plan
        digest = synopsis_input_digest(artifact_id, raw)
        text = None
        for s in prior:
            meta = s.metadata
            if (
                s.kind == self.synopsis_kind
                and meta.get("synthesizer_id") == self.synthesizer_id
                and meta.get("synopsis_input") == digest
            ):
                text = s.text
                break
        if text is None:
            text = self._synthesize(artifact)
        if not text:
            return plan
        surface = Surface(
            artifact_id,
            self.synopsis_kind,
            text,
            "document",
            {"synthesizer_id": self.synthesizer_id, "synopsis_input": digest},
        )
        return IndexPlan(plan.filter_fields, [surface, *plan.surfaces])

    def _synthesize(self, artifact: Artifact) -> str:
        try:
            text = self.synthesize(artifact)
        except Exception as exc:
            warnings.warn(
                f"synthesizer {self.synthesizer_id!r} failed on artifact {artifact.id!r} "
                f"({type(exc).__name__}: {exc}); indexed without a synopsis",
                SynopsisWarning,
                stacklevel=3,
            )
            return ""
        if not isinstance(text, str):
            warnings.warn(
                f"synthesizer {self.synthesizer_id!r} returned a {type(text).__name__} for "
                f"artifact {artifact.id!r}, not a str; indexed without a synopsis",
                SynopsisWarning,
                stacklevel=3,
            )
            return ""
        return " ".join(text.split())


def _identity(fn: Any, attr: str, given: str | None, example: str) -> str:
    """``given``, else ``fn``'s ``attr`` attribute, checked: an identity a
    build can compare (ValueError when there is none)."""
    value = getattr(fn, attr, None) if given is None else given
    if value is None:
        raise ValueError(
            f"with_synopsis needs {attr}=: {getattr(fn, '__name__', type(fn).__name__)!r} "
            f"has no {attr} attribute, and without an identity a build cannot tell "
            f"that what it makes changed; pass one that changes with it, e.g. "
            f"{attr}={example!r}"
        )
    return _check_id(attr, value)


def with_synopsis(
    strategy: Any,
    *,
    synthesize: Synthesizer,
    synthesizer_id: str | None = None,
    synopsis_kind: str = SYNOPSIS_KIND,
    when: str | Predicate = ALWAYS,
    when_id: str | None = None,
) -> SynopsisStrategy:
    """Wrap ``strategy`` to add one synopsis surface per gated artifact.

    Parameters
    ----------
    strategy : IndexingStrategy
        The inner strategy (:class:`~rowvoi.corpus.WholeText`,
        :class:`~rowvoi.corpus.Capability`, ...); its surfaces are kept, the
        synopsis is put first.
    synthesize : Synthesizer
        ``Artifact -> str``: the synopsis of an artifact (``""`` for none).
        A test double, a template, :class:`rowvoi.rag.claude_corpus.ClaudeSynthesizer`.
    synthesizer_id : str, optional
        The synthesizer's identity, part of the strategy id: change it
        whenever the synopses would change (a new prompt or model). Default
        the callable's ``synthesizer_id`` attribute; required when it has
        none.
    synopsis_kind : str
        The surface kind (default ``"synopsis"``).
    when : "always" or Predicate
        Synthesize for every artifact (default) or where ``when(artifact)``
        is true (e.g. :func:`make_thin_description_predicate`).
    when_id : str, optional
        The gate's identity, part of the strategy id. Default ``"always"``
        or the predicate's ``when_id`` attribute; required when it has none.

    Returns
    -------
    SynopsisStrategy
        A strategy usable wherever one is (``from_mapping(...,
        strategy=...)``, ``from_mcp_tools(..., strategy=...)``).

    Raises
    ------
    TypeError
        ``strategy`` has no ``decompose``; ``synthesize`` or ``when`` not
        callable; an id that is not a non-empty str.
    ValueError
        No ``synthesizer_id`` (or ``when_id``) given and the callable
        carries none: an unnamed callable cannot tell a build that its
        synopses changed.

    Examples
    --------
    >>> from rowvoi.corpus import WholeText
    >>> strat = with_synopsis(WholeText(), synthesize=lambda a: "a summary", synthesizer_id="s1")
    >>> [(s.kind, s.text) for s in strat.decompose("d", "Body text.").surfaces]
    [('synopsis', 'a summary'), ('document', 'Body text.')]
    >>> strat.strategy_id
    'with_synopsis(WholeText{"kind": "document", "text_key": null}, synthesizer="s1", kind="synopsis", when="always")'
    """
    if not callable(getattr(strategy, "decompose", None)):
        raise TypeError(
            f"strategy must be an indexing strategy (with decompose(artifact_id, raw)), "
            f"not {type(strategy).__name__}"
        )
    if not callable(synthesize):
        raise TypeError(
            f"synthesize must be a callable Artifact -> str, not {type(synthesize).__name__}"
        )
    synthesizer_id = _identity(synthesize, "synthesizer_id", synthesizer_id, "summary-v1")
    kind = _check_id("synopsis_kind", synopsis_kind)
    gate: Predicate | None
    if isinstance(when, str):
        if when != ALWAYS:
            raise ValueError(
                f"when must be {ALWAYS!r} or a predicate Artifact -> bool, not {when!r}"
            )
        gate, when_id = None, _check_id("when_id", ALWAYS if when_id is None else when_id)
    elif callable(when):
        gate, when_id = when, _identity(when, "when_id", when_id, "short-description-v1")
    else:
        raise TypeError(
            f"when must be {ALWAYS!r} or a callable Artifact -> bool, not {type(when).__name__}"
        )
    return SynopsisStrategy(strategy, synthesize, synthesizer_id, kind, gate, when_id)
