"""The public C ABI holds product functions only, each documented.

Every ``RV_API`` function in ``include/rowvoi/*.h`` states ``Since:`` in its
comment and marks its output pointers ``/* OUT */``; the installed
``librowvoi`` exports exactly the header's functions (no test hook, no
internal ``rv__`` symbol).
"""

import re
import shutil
import subprocess
from pathlib import Path

import rowvoi

HEADERS = sorted((Path(__file__).resolve().parents[2] / "include" / "rowvoi").glob("*.h"))
_DECL = re.compile(r"^RV_API\b[^(]*?\b(rv_\w+)\s*\(", re.M)
_COMMENT = re.compile(r"^/\*.*?\*/", re.M | re.S)  # comments that open a line


def _declarations():
    """(header, function name, comment block above its group, declaration text)."""
    out = []
    for h in HEADERS:
        text = h.read_text()
        for m in _DECL.finditer(text):
            end = text.index(";", m.end())
            decl = text[m.start() : end + 1]
            # the comment documenting this declaration: the last one that
            # closes before it, with only declarations in between
            before = text[: m.start()]
            blocks = list(_COMMENT.finditer(before))
            assert blocks, f"{h.name}: {m.group(1)} has no comment"
            last = blocks[-1]
            between = before[last.end() :]
            assert all(
                not ln.strip() or ln.startswith(("RV_API", " ")) for ln in between.splitlines()
            ), f"{h.name}: {m.group(1)} has no comment"
            out.append((h.name, m.group(1), last.group(0), decl))
    return out


def test_every_function_states_since():
    decls = _declarations()
    assert len(decls) > 100
    missing = [f"{h}: {name}" for h, name, comment, _ in decls if "Since:" not in comment]
    assert not missing, missing


def test_output_pointers_are_marked():
    unmarked = []
    for h, name, _, decl in _declarations():
        params = decl[decl.index("(") + 1 : decl.rindex(")")]
        pieces = re.split(r",(?![^/]*\*/)", params)
        # a comment after the comma ("int *x,  /* OUT */") belongs to x
        for i in range(1, len(pieces)):
            m = re.match(r"\s*/\*.*?\*/", pieces[i], re.S)
            if m:
                pieces[i - 1] += m.group(0)
                pieces[i] = pieces[i][m.end() :]
        for p in pieces:
            bare = re.sub(r"/\*.*?\*/", "", p, flags=re.S).strip()
            if not bare or bare == "void" or bare.startswith("const ") or "*" not in bare:
                continue
            typ = bare[: bare.index("*")].strip()
            first = params.strip().startswith(p.strip())
            if typ == "void" or (
                first and typ.startswith("rv_") and not name.endswith("_init") and "**" not in bare
            ):
                continue  # a callback context, or the handle the call works on
            if "OUT" not in p:
                unmarked.append(f"{h}: {name}: {bare}")
    assert not unmarked, unmarked


def test_every_function_is_in_the_argument_sweep():
    # tests/c/test_api_sweep.c checks this itself (and each pointer and size
    # argument) under ctest; this is the same check for the Python tier, so
    # a new RV_API function without a sweep entry fails here too.
    sweep = (Path(__file__).resolve().parents[1] / "c" / "test_api_sweep.c").read_text()
    entries = set(re.findall(r'^\s*\{"(rv_\w+)",', sweep, re.M))
    declared = {name for _, name, _, _ in _declarations()}
    assert declared - entries == set(), sorted(declared - entries)
    assert entries - declared == set(), sorted(entries - declared)


def test_no_test_hook_in_the_public_header():
    for h in HEADERS:
        assert "rv_test_" not in h.read_text(), h


def test_library_exports_exactly_the_header_functions():
    declared = {name for _, name, _, _ in _declarations()}
    lib = Path(rowvoi.get_lib_dir()) / "librowvoi.so"
    nm = shutil.which("nm")
    assert nm, "binutils' nm is needed to inspect librowvoi"
    out = subprocess.run(
        [nm, "-D", "--defined-only", str(lib)], capture_output=True, text=True, check=True
    ).stdout
    exported = {ln.split()[-1] for ln in out.splitlines() if ln.split()[-1].startswith("rv")}
    assert not [s for s in exported if s.startswith("rv__")], "internal symbols exported"
    # GCC names the ifunc resolver of a public target_clones function
    # "NAME.resolver" and exports it beside NAME; it is no extra entry point.
    exported = {s.removesuffix(".resolver") for s in exported}
    assert exported == declared, (sorted(exported - declared), sorted(declared - exported))
