"""Render the public C header as a reference page (no doxygen needed).

``.. rowvoi-c-api::`` reads ``include/rowvoi.h``, follows its
``#include "rowvoi/NAME.h"`` lines in order and renders one section per
header: the header's opening comment as its introduction, then every
declaration as an entry of Sphinx's C domain (``c:function``, ``c:struct``
with its ``c:member``\\ s, ``c:enum`` with its ``c:enumerator``\\ s,
``c:type``, ``c:macro``) carrying the comment that documents it. The page is
therefore as current as the header: nothing is copied by hand.

How a header is read (the house style of ``include/rowvoi/*.h``):

* A comment that ends on the line before a declaration documents it; later
  declarations with no blank line between them share it (``rv_version`` and
  ``rv_version_number``).
* A comment followed by a blank line is prose about the section around it.
* A comment on the same line as a struct member, an enumerator, a parameter
  or an object-like macro (``/* OUT: k slots */``) belongs to that item.
* Lines inside ``#if`` blocks other than the include guard (the export
  macro, ``extern "C"``) are not API and are skipped.

Anything the reader does not recognise is reported as a Sphinx warning, so
a docs build with ``-W`` fails rather than drop part of the API silently;
the C domain itself parses every signature, so a declaration it cannot parse
fails the build too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.statemachine import StringList
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)

# Identifiers of the API inside comment text: rv_*, RV_*.
_IDENT = re.compile(r"\b(?:rv|RV)_[A-Za-z0-9_]+\b")
_INCLUDE = re.compile(r'^#\s*include\s+"(rowvoi/[A-Za-z0-9_]+\.h)"', re.MULTILINE)


# ----------------------------------------------------------------- lexing


@dataclass
class Comment:
    text: str  # cleaned text, lines joined by "\n"
    line: int  # first line (1-based)
    end_line: int
    trailing: bool  # code precedes it on its first line


@dataclass
class Chunk:
    """One top-level piece of a header, in order of appearance."""

    kind: str  # "comment", "code" (a declaration up to ';'), "define", "blank"
    line: int
    end_line: int = 0
    text: str = ""  # code with comments removed (code, define)
    comments: list[tuple[int, Comment]] = field(default_factory=list)  # (offset in text, c)
    comment: Comment | None = None  # for kind == "comment"


def _clean_comment(raw: str) -> str:
    """The words of a ``/* ... */`` comment: markers and ``**`` gutters gone.

    Continuation lines keep their indentation relative to each other (a
    formula table stays a table); their common indent is removed.
    """
    out = []
    for ln in raw[2:-2].split("\n"):
        s = ln.rstrip()
        st = s.lstrip()
        if st.startswith("**"):
            s = st[2:].removeprefix(" ")
        out.append(s)
    first, rest = out[0].strip(), out[1:]
    indents = [len(x) - len(x.lstrip()) for x in rest if x.strip()]
    cut = min(indents) if indents else 0
    return "\n".join([first, *(x[cut:] for x in rest)]).strip("\n")


def _lex(src: str, path: str) -> list[Chunk]:
    """Split a header into comments, declarations, defines and blank lines."""
    chunks: list[Chunk] = []
    i, n, line = 0, len(src), 1
    at_line_start = True
    code: Chunk | None = None
    depth = 0  # brace depth inside a declaration

    def newline() -> None:
        nonlocal line
        line += 1

    while i < n:
        c = src[i]
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            if j < 0:
                raise ValueError(f"{path}:{line}: unterminated comment")
            raw = src[i : j + 2]
            start = line
            line += raw.count("\n")
            com = Comment(_clean_comment(raw), start, line, trailing=not at_line_start)
            if code is not None:
                code.comments.append((len(code.text), com))
                code.text += " "
            else:
                chunks.append(Chunk("comment", start, line, comment=com))
            i = j + 2
            at_line_start = False
            continue
        if c == "\n":
            if code is not None:
                code.text += " "
            elif at_line_start:
                chunks.append(Chunk("blank", line, line))
            newline()
            i += 1
            at_line_start = True
            continue
        if c in " \t":
            if code is not None:
                code.text += " "
            i += 1
            continue
        if c == "#" and at_line_start and code is None:
            # A directive runs to the end of the line, across backslash
            # continuations and across comments that span lines.
            start = line
            text = ""
            coms: list[tuple[int, Comment]] = []
            while i < n and src[i] != "\n":
                if src.startswith("/*", i):
                    j = src.find("*/", i + 2)
                    raw = src[i : j + 2]
                    com = Comment(_clean_comment(raw), line, line + raw.count("\n"), True)
                    line += raw.count("\n")
                    coms.append((len(text), com))
                    text += " "
                    i = j + 2
                    continue
                if src[i] == "\\" and src.startswith("\n", i + 1):
                    text += " "
                    i += 2
                    newline()
                    continue
                text += src[i]
                i += 1
            chunks.append(Chunk("define", start, line, text=" ".join(text.split()), comments=coms))
            at_line_start = False
            continue
        # code
        if code is None:
            code = Chunk("code", line)
        code.text += c
        if c == "{":
            depth += 1
            if code.text.strip() == 'extern "C" {':  # C++ linkage, no declaration
                code.end_line, depth = line, 0
                chunks.append(code)
                code = None
        elif c == "}":
            depth -= 1
            if depth < 0:  # the end of extern "C"
                code.end_line, depth = line, 0
                chunks.append(code)
                code = None
        elif c == ";" and depth == 0:
            code.end_line = line
            chunks.append(code)
            code = None
        at_line_start = False
        i += 1
    if code is not None and code.text.strip():
        # `extern "C" {` and its `}` (inside #ifdef __cplusplus) end here.
        code.end_line = line
        chunks.append(code)
    return chunks


# ------------------------------------------------------------- parsing


@dataclass
class Entry:
    """One rendered C-domain entry (with nested ones for structs/enums)."""

    directive: str  # c:function, c:struct, c:member, c:enum, c:enumerator, c:type, c:macro
    signatures: list[str]
    doc: list[Comment] = field(default_factory=list)
    notes: list[tuple[str, str]] = field(default_factory=list)  # (item, note)
    value: str | None = None  # macro replacement text
    children: list[Entry] = field(default_factory=list)
    line: int = 0


@dataclass
class Block:
    """A lead comment and the declarations it documents, or a prose comment."""

    prose: Comment | None = None
    entries: list[Entry] = field(default_factory=list)


def _norm(s: str) -> str:
    """One line, single spaces, none before ``,``/``)`` or after ``(``."""
    s = " ".join(s.split())
    s = re.sub(r"\s+([,)\]])", r"\1", s)
    s = re.sub(r"([(\[])\s+", r"\1", s)
    return s.strip()


def _split_top(text: str, sep: str) -> list[tuple[int, str]]:
    """Split at sep outside parentheses/braces; (start offset, piece)."""
    out, depth, start = [], 0, 0
    for k, ch in enumerate(text):
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
        elif ch == sep and depth == 0:
            out.append((start, text[start:k]))
            start = k + 1
    out.append((start, text[start:]))
    return out


def _item_notes(
    body: str, body_off: int, comments: list[tuple[int, Comment]], pieces: list[tuple[int, str]]
) -> dict[int, list[Comment]]:
    """Attach comments inside a braced body or a parameter list to items.

    A comment on the line where an item ends (after its separator) belongs to
    that item; a comment on a line of its own belongs to the next item.
    """
    owned: dict[int, list[Comment]] = {}
    for off, com in comments:
        rel = off - body_off
        if rel < 0 or rel > len(body):
            continue
        # index of the last piece starting at or before rel
        k = 0
        for idx, (st, _) in enumerate(pieces):
            if st <= rel:
                k = idx
        before = body[pieces[k][0] : rel]
        # A trailing comment is owned by the piece it follows.  After a
        # separator it sits at the start of the next piece's text, so
        # "before" is blank there.
        if com.trailing and not before.strip() and k > 0:
            k -= 1
        owned.setdefault(k, []).append(com)
    return owned


class HeaderError(ValueError):
    pass


def _parse_code(chunk: Chunk, path: str) -> Entry | None:
    text = chunk.text.strip()
    if text in ('extern "C" {', "}"):
        return None
    m = re.fullmatch(r"typedef\s+(struct|enum)\s+(\w+)\s+(\w+)\s*;", text)
    if m:
        if m.group(2) != m.group(3):
            raise HeaderError(f"{path}:{chunk.line}: typedef of {m.group(2)} as {m.group(3)}")
        return Entry("c:type", [m.group(3)], line=chunk.line)
    m = re.fullmatch(r"typedef\s+(struct|enum)\s+(\w+)\s*\{(.*)\}\s*(\w+)\s*;", text, re.DOTALL)
    if m:
        kind, tag, body, name = m.groups()
        if tag != name:
            raise HeaderError(f"{path}:{chunk.line}: typedef of {tag} as {name}")
        entry = Entry(f"c:{kind}", [name], line=chunk.line)
        sep, child = (";", "c:member") if kind == "struct" else (",", "c:enumerator")
        pieces = _split_top(body, sep)
        owned = _item_notes(body, text.index("{") + 1, chunk.comments, pieces)
        for k, (_, piece) in enumerate(pieces):
            if piece.strip():
                entry.children.append(
                    Entry(child, [_norm(piece)], doc=owned.get(k, []), line=chunk.line)
                )
            elif owned.get(k) and entry.children:  # after the last separator
                entry.children[-1].doc.extend(owned[k])
        return entry
    m = re.fullmatch(r"typedef\s+(.+\(\s*\*\s*\w+\s*\)\s*\(.*\))\s*;", text, re.DOTALL)
    if m:
        return Entry("c:type", [_norm(m.group(1))], line=chunk.line)
    m = re.fullmatch(r"RV_API\s+(.+?\b(\w+)\s*\((.*)\))\s*;", text, re.DOTALL)
    if m:
        decl, _name, params = m.groups()
        entry = Entry("c:function", [_norm(decl)], line=chunk.line)
        p_off = text.index("(", text.index(_name)) + 1
        pieces = _split_top(params, ",")
        owned = _item_notes(params, p_off, chunk.comments, pieces)
        for k, (_, piece) in enumerate(pieces):
            pname = re.findall(r"\w+", piece)
            for com in owned.get(k, []):
                entry.notes.append((pname[-1] if pname else piece.strip(), com.text))
        return entry
    raise HeaderError(f"{path}:{chunk.line}: declaration not understood: {text[:80]!r}")


def _parse_define(chunk: Chunk, guard: str | None) -> Entry | None:
    m = re.fullmatch(r"#\s*define\s+(\w+)(\([^)]*\))?\s*(.*)", chunk.text, re.DOTALL)
    if not m:
        return None
    name, args, value = m.groups()
    if name == guard:
        return None
    sig = name + (args.replace(",", ", ").replace(",  ", ", ") if args else "")
    entry = Entry("c:macro", [sig], value=value.strip() or None, line=chunk.line)
    entry.doc = [c for _, c in chunk.comments]
    return entry


def read_header(path: Path) -> tuple[Comment | None, list[Block]]:
    """The opening comment of a header and its blocks, in order."""
    src = path.read_text(encoding="utf-8")
    chunks = _lex(src, str(path))
    intro: Comment | None = None
    blocks: list[Block] = []
    guard: str | None = None
    cond = 0  # depth of #if nesting
    pending: Comment | None = None  # lead comment waiting for a declaration
    current: Block | None = None  # block taking consecutive declarations
    for ch in chunks:
        if ch.kind == "define" and re.match(r"#\s*if", ch.text):
            if guard is None and (m := re.match(r"#\s*ifndef\s+(\w+)", ch.text)):
                guard = m.group(1)
            cond += 1
            continue
        if ch.kind == "define" and re.match(r"#\s*endif", ch.text):
            cond -= 1
            continue
        if cond > 1:
            continue  # export macro, extern "C": not API
        if ch.kind == "blank":
            if pending is not None:
                blocks.append(Block(prose=pending))
                pending = None
            current = None
            continue
        if ch.kind == "comment":
            assert ch.comment is not None
            if intro is None and not blocks and guard is None:
                intro = ch.comment
                continue
            if pending is not None:  # two lead comments in a row: the first is prose
                blocks.append(Block(prose=pending))
            pending = ch.comment
            current = None
            continue
        if ch.kind == "define":
            if re.match(r"#\s*(include|else|elif|undef|error|pragma)", ch.text):
                continue
            entry = _parse_define(ch, guard)
        else:
            entry = _parse_code(ch, str(path))
        if entry is None:
            continue
        if current is None:
            current = Block(prose=pending)
            blocks.append(current)
            pending = None
        current.entries.append(entry)
    if pending is not None:
        blocks.append(Block(prose=pending))
    return intro, blocks


# ------------------------------------------------------------ rendering


def _text_nodes(text: str) -> list[nodes.Node]:
    """Comment text as docutils nodes (never parsed as reST: a comment may
    hold ``*`` and ``_`` freely). Indented lines become literal blocks;
    API identifiers become literals that link to their entries."""
    out: list[nodes.Node] = []
    for para in re.split(r"\n\s*\n", text.strip("\n")):
        runs: list[tuple[bool, list[str]]] = []  # (indented?, lines)
        for ln in para.split("\n"):
            indented = ln.startswith("  ") and bool(ln.strip())
            if runs and runs[-1][0] == indented:
                runs[-1][1].append(ln)
            else:
                runs.append((indented, [ln]))
        for indented, group in runs:
            if indented:
                cut = min(len(x) - len(x.lstrip()) for x in group if x.strip())
                block = "\n".join(x[cut:] for x in group)
                out.append(nodes.literal_block(block, block))
            else:
                p = nodes.paragraph()
                p.extend(_inline(" ".join(" ".join(group).split())))
                out.append(p)
    return out


_ROLE = re.compile(r"^(.*?)\s{2,}(METHOD|CONSTRUCTOR): (\w+)[ \t]*$", re.MULTILINE)


def _role_tag(text: str) -> tuple[str, tuple[str, str] | None]:
    """Split the ``METHOD: rv_x`` / ``CONSTRUCTOR: rv_x`` tag off a comment's
    first line: (text without it, (role, handle type)) or (text, None)."""
    first, _, rest = text.partition("\n")
    m = _ROLE.match(first)
    if m is None:
        return text, None
    role = "Constructor" if m.group(2) == "CONSTRUCTOR" else "Method"
    return "\n".join(x for x in (m.group(1), rest) if x), (role, m.group(3))


def _inline(text: str) -> list[nodes.Node]:
    parts: list[nodes.Node] = []
    pos = 0
    for m in _IDENT.finditer(text):
        if m.start() > pos:
            parts.append(nodes.Text(text[pos : m.start()]))
        lit = nodes.literal(m.group(0), m.group(0))
        lit["rv_cref"] = m.group(0)
        parts.append(lit)
        pos = m.end()
    if pos < len(text):
        parts.append(nodes.Text(text[pos:]))
    return parts


def _directive_rst(entry: Entry, indent: str = "") -> list[str]:
    lines = [f"{indent}.. {entry.directive}:: {entry.signatures[0]}"]
    pad = " " * (len(entry.directive) + 6)
    lines += [f"{indent}{pad}{s}" for s in entry.signatures[1:]]
    lines.append("")
    for child in entry.children:
        lines += _directive_rst(child, indent + "   ")
    return lines


def _flatten(entry: Entry) -> list[Entry]:
    out = [entry]
    for child in entry.children:
        out += _flatten(child)
    return out


class CApiDirective(SphinxDirective):
    """``.. rowvoi-c-api::`` -- the whole public header, one section per file."""

    has_content = False
    required_arguments = 0
    optional_arguments = 1  # the umbrella header, relative to the project root

    def run(self) -> list[nodes.Node]:
        root = Path(self.config.rowvoi_project_root)
        umbrella = root / (self.arguments[0] if self.arguments else "include/rowvoi.h")
        self.env.note_dependency(str(umbrella))
        src = umbrella.read_text(encoding="utf-8")
        included = _INCLUDE.findall(src)
        on_disk = sorted(
            str(p.relative_to(umbrella.parent)) for p in (umbrella.parent / "rowvoi").glob("*.h")
        )
        missing = sorted(set(on_disk) - set(included))
        if missing:
            logger.warning(
                "rowvoi-c-api: headers not included by %s: %s",
                umbrella.name,
                ", ".join(missing),
                location=self.get_location(),
            )
        result: list[nodes.Node] = []
        intro, _ = read_header(umbrella)
        if intro is not None:
            result += _text_nodes(intro.text)
        for rel in included:
            result.append(self._section(umbrella.parent / rel, rel))
        return result

    def _section(self, path: Path, rel: str) -> nodes.section:
        self.env.note_dependency(str(path))
        sec_id = nodes.make_id("c-header-" + rel)
        section = nodes.section(ids=[sec_id])
        section += nodes.title(rel, "", nodes.literal(rel, rel))
        try:
            intro, blocks = read_header(path)
        except HeaderError as exc:
            logger.warning("rowvoi-c-api: %s", exc, location=self.get_location())
            return section
        # Self-check: every exported function of the header is on the page.
        n_api = len(re.findall(r"^RV_API\b", path.read_text(encoding="utf-8"), re.MULTILINE))
        n_seen = sum(
            len(e.signatures) for b in blocks for e in b.entries if e.directive == "c:function"
        )
        if n_api != n_seen:
            logger.warning(
                "rowvoi-c-api: %s declares %d RV_API functions, the page shows %d",
                rel,
                n_api,
                n_seen,
                location=self.get_location(),
            )
        if intro is not None:
            section += _text_nodes(intro.text)
        for block in blocks:
            if not block.entries:
                if block.prose is not None:
                    section += _text_nodes(block.prose.text)
                continue
            section += self._render_block(block, path)
        return section

    def _render_block(self, block: Block, path: Path) -> list[nodes.Node]:
        out: list[nodes.Node] = []
        entries = block.entries
        lead = block.prose
        # Several functions under one comment: one entry, several signatures.
        if len(entries) > 1 and all(e.directive == "c:function" and not e.notes for e in entries):
            merged = Entry("c:function", [s for e in entries for s in e.signatures])
            merged.line = entries[0].line
            entries = [merged]
        if lead is not None:
            if len(entries) == 1:
                entries[0].doc = [lead, *entries[0].doc]
            else:
                out += _text_nodes(lead.text)
        for entry in entries:
            out += self._render_entry(entry, path)
        return out

    def _render_entry(self, entry: Entry, path: Path) -> list[nodes.Node]:
        rst = StringList()
        for ln in _directive_rst(entry):
            rst.append(ln, str(path), entry.line)
        holder = nodes.container()
        self.state.nested_parse(rst, 0, holder)
        descs = list(holder.findall(addnodes.desc))
        flat = _flatten(entry)
        if len(descs) != len(flat):
            logger.warning(
                "rowvoi-c-api: %s:%d: the C domain made %d entries of %d",
                path,
                entry.line,
                len(descs),
                len(flat),
                location=self.get_location(),
            )
            return list(holder.children)
        for desc, item in zip(descs, flat):
            content = next(iter(desc.findall(addnodes.desc_content)))
            body: list[nodes.Node] = []
            for com in item.doc:
                text, role = _role_tag(com.text)
                if role is not None:
                    p = nodes.paragraph()
                    p += nodes.emphasis(role[0], role[0])
                    p += nodes.Text(" of ")
                    p.extend(_inline(role[1]))
                    body.append(p)
                body += _text_nodes(text)
            if item.value is not None:
                p = nodes.paragraph()
                p += nodes.Text("Value: ")
                p += nodes.literal(item.value, item.value)
                body.append(p)
            if item.notes:
                # The header marks parameters inline: /* OUT */, /* OUT: k slots */.
                para = nodes.paragraph()
                para += nodes.strong(text="Parameters marked in the header:")
                for k, (pname, note) in enumerate(item.notes):
                    para += nodes.Text(" " if k == 0 else "; ")
                    para += nodes.literal(pname, pname)
                    para += nodes.Text(" ")
                    para.extend(_inline(" ".join(note.split())))
                body.append(para)
            # Nested entries (members, enumerators) follow the parent's text.
            content.children[0:0] = body
            for n in body:
                n.parent = content
        return list(holder.children)


def _link_identifiers(app: Sphinx, doctree: nodes.document) -> None:
    """Turn identifiers in header comments into links to their entries."""
    targets: dict[str, str] = {}
    for sig in doctree.findall(addnodes.desc_signature):
        if sig.parent.get("domain") != "c" or not sig["ids"]:
            continue
        names = [n.astext() for n in sig.findall(addnodes.desc_name)]
        if names:
            name = names[0].split(".")[-1]
            targets.setdefault(name, sig["ids"][0])
    for lit in list(doctree.findall(nodes.literal)):
        name = lit.get("rv_cref")
        if name is None:
            continue
        del lit["rv_cref"]
        if name in targets and lit.parent is not None:
            ref = nodes.reference("", "", internal=True, refid=targets[name])
            lit.replace_self(ref)
            ref += lit


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("rowvoi_project_root", "", "env", types=frozenset({str}))
    app.add_directive("rowvoi-c-api", CApiDirective)
    app.connect("doctree-read", _link_identifiers)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
