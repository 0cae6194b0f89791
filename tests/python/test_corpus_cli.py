"""The corpus verbs of the CLI: output, --json, exit codes."""

import json

import pytest

from rowvoi.cli.main import main
from rowvoi.corpus import CorpusStore


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("ROWVOI_HOME", str(tmp_path / "home"))
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "wing.md").write_text("Lift and drag of a thin wing at low speed.")
    (notes / "pipe.md").write_text("Heat transfer to a turbulent fluid in a pipe.")
    (notes / "shock.md").write_text("Oblique shock waves on a wedge in supersonic flow.")
    return tmp_path


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_build_search_info_ls_rm(env, capsys):
    code, out, _err = run(
        capsys, "build", "notes", "--files", str(env / "notes"), "--embedder", "hashing"
    )
    assert code == 0 and out.startswith("built corpus 'notes' (generation 1): 3 artifacts")
    code, out, _ = run(capsys, "build", "notes")
    assert code == 0 and "up to date" in out and "nothing embedded" in out
    (env / "notes" / "pipe.md").write_text("Boundary layer suction on a swept wing.")
    code, out, _ = run(capsys, "build", "notes", "--json")
    report = json.loads(out)
    assert code == 0 and report["n_changed"] == 1 and report["texts_embedded"] == 1
    code, out, _ = run(
        capsys, "search", "notes", "swept wing suction", "--mode", "hybrid", "--k", "2"
    )
    assert code == 0 and out.splitlines()[0].split()[2] == "pipe.md"
    assert str(env / "notes" / "pipe.md") in out  # the pointer
    code, out, _ = run(
        capsys, "search", "notes", "wing", "--mode", "lexical", "--json", "--explain"
    )
    doc = json.loads(out)
    assert doc["mode"] == "lexical" and doc["hits"][0]["explain"]["lexical"]["terms"]
    code, out, _ = run(capsys, "search", "notes", "zzzz", "--mode", "lexical")
    assert code == 0 and out.strip() == (
        "(no hits: no record contains a query term (analysed: 'zzzz'))"
    )
    code, out, _ = run(capsys, "info", "notes")
    assert code == 0 and "3 artifacts, 3 records" in out and "name (text)" in out
    code, out, _ = run(capsys, "info", "notes", "--json")
    info = json.loads(out)
    assert info["n_artifacts"] == 3 and info["registry"]["kind"] == "files"
    assert set(info["files"]) >= {"manifest.json", "docs.sqlite"} and len(info["files"]) <= 8
    code, out, _ = run(capsys, "ls", "--json")
    rows = json.loads(out)
    assert [r["name"] for r in rows] == ["notes"] and rows[0]["n_records"] == 3
    code, out, _ = run(capsys, "ls")
    assert out.splitlines()[0].split()[:3] == ["NAME", "ARTIFACTS", "RECORDS"]
    code, out, _ = run(capsys, "rm", "notes")
    assert code == 0 and not (env / "home" / "corpora" / "notes").exists()
    code, out, _ = run(capsys, "ls")
    assert "no corpora yet" in out


def test_register_then_build(env, capsys):
    code, out, _ = run(
        capsys,
        "register",
        "papers",
        "--files",
        str(env / "notes"),
        "--pattern",
        r"wing\.md$",
        "--embedder",
        "hashing:32",
        "--strategy",
        "chunked",
        "--chunk-size",
        "20",
    )
    assert code == 0 and "registered 'papers'" in out
    assert not (env / "home" / "corpora" / "papers").exists()
    code, out, _ = run(capsys, "build", "papers", "--json")
    assert code == 0 and json.loads(out)["n_new"] == 1
    code, out, _ = run(capsys, "info", "papers", "--json")
    info = json.loads(out)
    assert info["embedder"]["dim"] == 32 and "chunk" in info["kinds"]
    code, out, _ = run(capsys, "rm", "papers", "--keep-registration")
    code, out, _ = run(capsys, "build", "papers", "--json")
    assert code == 0 and json.loads(out)["n_new"] == 1


def test_errors_and_exit_codes(env, capsys):
    code, _, err = run(capsys, "search", "ghost", "wing")
    assert code == 1 and "no corpus 'ghost'" in err and "rowvoi build ghost" in err
    assert not (env / "home" / "corpora" / "ghost").exists()
    code, _, err = run(capsys, "build", "ghost")
    assert code == 1 and "not registered" in err
    code, _, err = run(capsys, "info", "ghost")
    assert code == 1
    code, _, err = run(capsys, "rm", "ghost")
    assert code == 1 and "no corpus 'ghost'" in err
    code, _, err = run(capsys, "build", "n", "--files", "a", "--records", "b")
    assert code == 2 and "one source" in err
    code, _, err = run(capsys, "build", "bad name", "--files", str(env / "notes"))
    assert code == 2 and "corpus name 'bad name'" in err  # wrong whatever the data
    code, _, err = run(capsys, "build", "n", "--records", "x.jsonl", "--pattern", "a")
    assert code == 2
    empty = env / "empty"
    empty.mkdir()
    code, _, err = run(capsys, "build", "void", "--files", str(empty), "--embedder", "hashing")
    assert code == 0
    code, _, err = run(capsys, "search", "void", "wing")
    assert code == 1 and "corpus 'void' is empty; build it first: rowvoi build void" in err
    run(capsys, "build", "notes", "--files", str(env / "notes"), "--embedder", "hashing")
    # Out-of-range numbers and unknown choices are usage errors (exit 2,
    # issue 28), as text where a number belongs is.
    code, _, err = run(capsys, "search", "notes", "wing", "--k", "0")
    assert code == 2 and "argument --k: must be an integer in 1 .. 100000, got '0'" in err
    code, _, err = run(capsys, "search", "notes", "wing", "--k", str(10**12))
    assert code == 2 and "argument --k" in err
    code, _, err = run(capsys, "search", "notes", "wing", "--k", "two")
    assert code == 2 and "--k" in err
    code, _, err = run(capsys, "search", "notes", "wing", "--mode", "semantic")
    assert code == 2 and "argument --mode: invalid choice: 'semantic'" in err
    code, _, err = run(capsys, "search", "notes", "wing", "--fusion", "sum")
    assert code == 2 and "argument --fusion: invalid choice: 'sum'" in err
    code, _, err = run(capsys, "search", "notes", "wing", "--index", "ivf")
    assert code == 2 and "argument --index: invalid choice: 'ivf'" in err
    code, _, err = run(capsys, "search", "notes", "wing", "--filter", "{year: 1}")
    assert code == 2 and "not valid JSON" in err
    code, _, err = run(capsys, "search", "notes", "wing", "--filter", '{"year": 1}')
    assert code == 1 and "unknown column; allowed: name, path, suffix" in err
    code, _, err = run(capsys, "search", "notes", "wing", "--filter", '{"name": {"$gt": 1}}')
    assert code == 1 and "name is text" in err
    code, _, err = run(capsys, "build", "notes", "--embedder", "word2vec")
    assert code == 2 and "unknown embedder spec 'word2vec'" in err
    store = CorpusStore.local("notes")
    with store.lock():
        code, _, err = run(capsys, "build", "notes")
        assert code == 1 and "is being built by process" in err
        code, _, _ = run(capsys, "search", "notes", "wing", "--mode", "lexical")
        assert code == 0
        code, _, err = run(capsys, "rm", "notes")
        assert code == 1 and "is being built" in err
    for verb in ("build", "search", "ls", "info", "rm", "register"):
        code, out, _ = run(capsys, verb, "--help")
        assert code == 0 and "usage: rowvoi " + verb in out
