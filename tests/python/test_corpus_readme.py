"""The README's "Search your own documents" and "Links between documents"
commands run as written."""

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
ROWVOI = Path(sys.executable).with_name("rowvoi")


def section(title):
    start = README.index(title)
    match = re.compile(r"^#{1,6} ", re.M).search(README, start + len(title))
    return README[start : match.start() if match else len(README)]


def test_search_your_own_documents(tmp_path):
    text = section("### Search your own documents")
    block = re.search(r"```sh\n(.*?)\n```", text, re.S).group(1)
    env = dict(os.environ, ROWVOI_HOME=str(tmp_path / "home"))
    outputs = []
    for line in block.splitlines():
        argv = shlex.split(line.split("#")[0] if " #" in line else line)
        assert argv[0] == "rowvoi"
        proc = subprocess.run(
            [str(ROWVOI), *argv[1:]],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, (line, proc.stderr)
        outputs.append(proc.stdout)
    assert outputs[0].startswith("built corpus 'notes' (generation 1): 6 artifacts")
    assert outputs[1].splitlines()[0].split()[2] == "stall.md"
    assert "up to date" in outputs[2] and "nothing embedded" in outputs[2]
    assert '"artifact_id": "heat-transfer.md"' in outputs[3]
    assert "6 artifacts, 6 records" in outputs[4]
    assert outputs[5].splitlines()[1].startswith("notes")
    assert not (tmp_path / "home" / "corpora" / "notes").exists()
    # the Python snippet, with the home it points at
    code = re.search(r"```python\n(.*?)\n```", text, re.S).group(1)
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].startswith("shock-waves.md ")


def test_links_between_documents(tmp_path):
    text = section("#### Links between documents")
    block = re.search(r"```sh\n(.*?)\n```", text, re.S).group(1)
    env = dict(os.environ, ROWVOI_HOME=str(tmp_path / "home"))
    outputs = []
    for line in block.splitlines():
        argv = shlex.split(line)
        assert argv[0] == "rowvoi"
        proc = subprocess.run(
            [str(ROWVOI), *argv[1:]],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, (line, proc.stderr)
        outputs.append(proc.stdout)
    assert "6 artifacts" in outputs[0] and "7 links" in outputs[0]
    assert outputs[1].splitlines()[0] == "wings: 1 out, 3 in (fan-in 3)"
    assert "stall --PARENT--> wings" in outputs[2].splitlines()
    assert len(outputs[2].splitlines()) == 5  # every edge within two hops (budget 6)
    first = outputs[3].splitlines()[0].split()
    assert first[2:] == ["stall", "[body]", "depth", "1", "via", "wings"]
    hits = json.loads(outputs[4])["hits"]
    assert hits[0]["artifact_id"] == "stall" and hits[0]["metadata"]["seed"] == "wings"
    assert not (tmp_path / "home" / "corpora" / "aero").exists()
    code = re.search(r"```python\n(.*?)\n```", text, re.S).group(1)
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("[")]
    assert lines[0].startswith("[('stall', 1, 'wings')")
    assert lines[1] == "['flaps', 'flutter', 'stall'] ['shock-waves']"
