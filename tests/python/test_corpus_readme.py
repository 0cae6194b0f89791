"""The README's "Search your own documents" and "Links between documents"
commands run as written."""

import json

from readme_blocks import run_commands, run_python, section


def test_search_your_own_documents(tmp_path):
    text = section("### Search your own documents")
    outputs = run_commands(text, tmp_path / "home")
    assert outputs[0].startswith("built corpus 'notes' (generation 1): 6 artifacts")
    assert outputs[1].splitlines()[0].split()[2] == "stall.md"
    assert "up to date" in outputs[2] and "nothing embedded" in outputs[2]
    assert '"artifact_id": "heat-transfer.md"' in outputs[3]
    assert "6 artifacts, 6 records" in outputs[4]
    assert outputs[5].splitlines()[1].startswith("notes")
    assert not (tmp_path / "home" / "corpora" / "notes").exists()
    # the Python snippet, with the home it points at
    out = run_python(text, tmp_path / "home")
    assert out.splitlines()[0].startswith("shock-waves.md ")


def test_links_between_documents(tmp_path):
    text = section("#### Links between documents")
    outputs = run_commands(text, tmp_path / "home")
    assert "6 artifacts" in outputs[0] and "7 links" in outputs[0]
    assert outputs[1].splitlines()[0] == "wings: 1 out, 3 in (fan-in 3)"
    assert "stall --PARENT--> wings" in outputs[2].splitlines()
    assert len(outputs[2].splitlines()) == 5  # every edge within two hops (budget 6)
    first = outputs[3].splitlines()[0].split()
    assert first[2:] == ["stall", "[body]", "depth", "1", "via", "wings"]
    hits = json.loads(outputs[4])["hits"]
    assert hits[0]["artifact_id"] == "stall" and hits[0]["metadata"]["seed"] == "wings"
    assert not (tmp_path / "home" / "corpora" / "aero").exists()
    out = run_python(text, tmp_path / "home")
    lines = [ln for ln in out.splitlines() if ln.startswith("[")]
    assert lines[0].startswith("[('stall', 1, 'wings')")
    assert lines[1] == "['flaps', 'flutter', 'stall'] ['shock-waves']"
