"""Corpus maintenance: policies, maintain (idempotent, dry run, lock, log),
records fetchers, coverage, and the maintain/coverage verbs."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from rowvoi.cli.main import main
from rowvoi.corpus import CorpusNotFound, CorpusStore, registry
from rowvoi.corpus.maintenance.policy import MaintenancePolicy, parse_duration, policy_from_spec
from rowvoi.corpus.maintenance.runs import (
    MaintenanceBusy,
    coverage,
    maintain,
    maintenance_dir,
    maintenance_log,
    policy_for,
    set_policy,
)


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("ROWVOI_HOME", str(tmp_path / "home"))
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "wing.md").write_text("Lift and drag of a thin wing at low speed.")
    (notes / "pipe.md").write_text("Heat transfer to a turbulent fluid in a pipe.")
    return tmp_path


def files_corpus(env, name="notes", **kw):
    return registry.register(name, "files", root=str(env / "notes"), embedder="hashing:32", **kw)


def actions(report):
    return [(r.name, r.action, r.reason) for r in report]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def quiet_env():
    """The environment for a child process (an editable install's rebuild
    notes kept off its stdout)."""
    return dict(os.environ, SKBUILD_EDITABLE_VERBOSE="0")


def tree(path):
    """Every file under path with its bytes and mtime."""
    out = {}
    for dirpath, _, files in os.walk(path):
        for f in files:
            p = os.path.join(dirpath, f)
            with open(p, "rb") as fh:
                out[p] = (fh.read(), os.stat(p).st_mtime_ns)
    return out


# ------------------------------------------------------------------ policies


def test_policy_specs():
    assert parse_duration("1h30m") == 5400.0 and parse_duration("1d 12h") == 129600.0
    assert policy_from_spec("source-change") == MaintenancePolicy("on_source_change")
    assert policy_from_spec("interval:6h") == MaintenancePolicy("interval", 21600.0)
    assert policy_from_spec({"on": "interval", "every_seconds": 60}).to_spec() == "interval:1m"
    assert policy_from_spec("manual").to_dict() == {"on": "manual"}
    for bad, msg in [
        ("weekly", "use on_source_change, manual or interval"),
        ("interval", "needs a duration"),
        ("interval:soon", "use a number"),
        ("interval:0s", "must be > 0"),
        ("manual:1h", "takes no duration"),
        ({"on": "interval", "every": 5}, "expected"),
    ]:
        with pytest.raises(ValueError, match=msg):
            policy_from_spec(bad)
    with pytest.raises(TypeError, match="a maintenance policy is a string"):
        policy_from_spec(3)


def test_policy_stored_with_registration(env):
    entry = files_corpus(env, maintenance="interval:2h")
    assert entry["maintenance"] == {"on": "interval", "every_seconds": 7200.0}
    files_corpus(env)  # re-registered without a policy: the policy stays
    assert policy_for("notes").to_spec() == "interval:2h"
    assert set_policy("notes", "manual").on == "manual"
    assert registry.get("notes")["maintenance"] == {"on": "manual"}
    assert set_policy("notes", None).to_spec() == "on_source_change"  # the kind's default
    registry.register("feed", "records", fetcher="json:loads")
    assert policy_for("feed").to_spec() == "interval:1d"
    with pytest.raises(ValueError, match="corpus 'x': maintenance policy 'often'"):
        registry.register("x", "files", root=str(env), maintenance="often")
    with pytest.raises(CorpusNotFound, match="not registered"):
        set_policy("ghost", "manual")
    with pytest.raises(CorpusNotFound, match="not registered"):
        policy_for("ghost")


# ------------------------------------------------------- on_source_change


def test_source_change_and_idempotence(env):
    files_corpus(env)
    assert actions(maintain(all=True)) == [("notes", "built", "never built")]
    second = maintain(all=True)
    assert actions(second) == [("notes", "nothing to do", "source unchanged")]
    assert second.nothing_to_do and not second.results[0].ran
    # a touched file is not a change (its hash matches the ledger)
    wing = env / "notes" / "wing.md"
    os.utime(wing, ns=(time.time_ns(), time.time_ns() + 10**9))
    assert actions(maintain(all=True))[0][1] == "nothing to do"
    wing.write_text("Lift of a swept wing.")
    (env / "notes" / "new.md").write_text("Flutter of a panel.")
    (env / "notes" / "pipe.md").unlink()
    r = maintain("notes").results[0]
    assert (r.action, r.reason) == ("built", "source changed: 1 new, 1 changed, 1 gone")
    assert (r.counts["n_new"], r.counts["n_changed"], r.counts["n_deleted"]) == (1, 1, 1)
    assert maintain(all=True).nothing_to_do
    # a same-size edit within the mtime's racy window is still seen
    wing.write_text("Lift of a swept wong.")
    assert actions(maintain(all=True))[0][2] == "source changed: 1 changed"


def test_build_outside_maintain_is_not_rebuilt(env, capsys):
    files_corpus(env)
    assert run(capsys, "build", "notes")[0] == 0
    assert actions(maintain(all=True)) == [("notes", "nothing to do", "source unchanged")]


def test_registration_change_rebuilds(env):
    files_corpus(env)
    maintain(all=True)
    registry.register("notes", "files", root=str(env / "notes"), embedder="hashing:64")
    r = maintain(all=True).results[0]
    assert (r.action, r.reason, r.counts["rebuild"]) == (
        "built",
        "registration changed",
        "embedder changed",
    )
    assert maintain(all=True).nothing_to_do


# ---------------------------------------------------------- interval, manual


def test_interval_policy(env):
    files_corpus(env, maintenance="interval:1h")
    t0 = 1_900_000_000.0
    assert actions(maintain(all=True, now=t0))[0][1:] == ("built", "never built")
    r = maintain(all=True, now=t0 + 1800).results[0]
    assert (r.action, r.reason) == ("nothing to do", "every 1h: next run due in 30m")
    (env / "notes" / "new.md").write_text("Flutter of a panel.")  # not looked at before due
    assert maintain(all=True, now=t0 + 3599).nothing_to_do
    r = maintain(all=True, now=t0 + 3600).results[0]
    assert (r.action, r.reason, r.counts["n_new"]) == ("built", "interval elapsed (1h)", 1)
    r = maintain(all=True, now=t0 + 7300).results[0]
    assert (r.action, r.counts["n_new"]) == ("up to date", 0)  # due, but nothing changed
    assert maintain(all=True, now=t0 + 7301).nothing_to_do


def test_manual_policy(env):
    files_corpus(env, maintenance="manual")
    r = maintain(all=True).results[0]
    assert r.action == "skipped" and "rowvoi maintain notes" in r.reason
    assert not CorpusStore.local("notes").exists()
    assert maintain("notes").results[0].action == "built"
    assert maintain(all=True).results[0].action == "skipped"
    r = maintain("notes").results[0]
    assert (r.action, r.reason) == ("up to date", "asked by name (manual policy)")
    assert maintain(all=True, force=True).results[0].reason == "forced"


# ----------------------------------------------------------- dry run, log


def test_dry_run_changes_nothing(env):
    files_corpus(env)
    home = env / "home"
    before = tree(home)
    r = maintain(all=True, dry_run=True)
    assert actions(r) == [("notes", "would build", "never built")] and r.dry_run
    assert tree(home) == before and not CorpusStore.local("notes").exists()
    maintain(all=True)
    (env / "notes" / "wing.md").write_text("Lift of a swept wing.")
    before = tree(home)
    assert actions(maintain("notes", dry_run=True))[0][1:] == (
        "would build",
        "source changed: 1 changed",
    )
    assert tree(home) == before
    assert maintain("notes").results[0].action == "built"


def test_log_records_each_run(env):
    files_corpus(env)
    maintain(all=True)
    maintain(all=True)
    maintain(all=True, dry_run=True)  # not logged
    log = maintenance_log("notes")
    assert [(e["action"], e["reason"]) for e in log] == [
        ("built", "never built"),
        ("nothing to do", "source unchanged"),
    ]
    assert log[0]["counts"]["n_new"] == 2 and log[0]["policy"] == "on_source_change"
    assert log[0]["time"].endswith("+00:00") and "counts" not in log[1]
    # the log and state live beside the corpora, not in the corpus
    assert sorted(p.name for p in maintenance_dir().iterdir()) == [
        "maintain.lock",
        "notes.log.jsonl",
        "notes.state.json",
    ]


# --------------------------------------------------------------------- lock

_HOLDER = textwrap.dedent("""
    import sys, time
    from rowvoi.corpus.maintenance.runs import maintenance_dir
    from rowvoi.corpus.storage.lock import pid_lock
    maintenance_dir().mkdir(parents=True, exist_ok=True)
    with pid_lock(maintenance_dir() / "maintain.lock", lambda h: RuntimeError("busy")):
        print("held", flush=True)
        time.sleep(60)
""")


def _holder():
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER], stdout=subprocess.PIPE, text=True, env=quiet_env()
    )
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_concurrent_run_refused_then_dead_lock_taken_over(env, capsys):
    files_corpus(env)
    proc = _holder()
    try:
        with pytest.raises(MaintenanceBusy, match=rf"in progress: process {proc.pid} "):
            maintain(all=True)
        code, _, err = run(capsys, "maintain", "--all")
        assert code == 1 and "another 'rowvoi maintain' run is in progress" in err
        assert maintain(all=True, dry_run=True).results[0].action == "would build"
        assert not CorpusStore.local("notes").exists()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    report = maintain(all=True)  # the killed holder's lock is taken over
    assert report.took_over_lock_of == proc.pid and report.results[0].action == "built"
    assert maintain(all=True).took_over_lock_of is None  # released cleanly


def test_rm_forgets_maintenance_history(env, capsys):
    files_corpus(env)
    maintain(all=True)
    state = maintenance_dir() / "notes.state.json"
    log = maintenance_dir() / "notes.log.jsonl"
    assert state.exists() and log.exists()
    # a live maintain run refuses the removal before anything is deleted
    proc = _holder()
    try:
        code, _, err = run(capsys, "rm", "notes")
        assert code == 1 and "'rowvoi maintain' run is in progress" in err
        assert state.exists() and CorpusStore.local("notes").exists()
        assert registry.get("notes") is not None
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    # --keep-registration keeps the history with the registration
    assert run(capsys, "rm", "notes", "--keep-registration")[0] == 0
    assert state.exists() and maintenance_log("notes")
    assert maintain(all=True).results[0].action == "built"
    # a full rm leaves nothing behind, so a new corpus of the name starts afresh
    assert run(capsys, "rm", "notes")[0] == 0
    assert not state.exists() and not log.exists() and maintenance_log("notes") == []
    assert sorted(p.name for p in maintenance_dir().iterdir()) == ["maintain.lock"]


def test_corpus_being_built_is_an_error_in_a_sweep(env, capsys):
    files_corpus(env)
    files_corpus(env, "other")
    with CorpusStore.local("notes").lock():
        report = maintain(all=True)
        code, out, err = run(capsys, "maintain", "--all")
    assert [(r.name, r.action) for r in report] == [("notes", "error"), ("other", "built")]
    assert "is being built by process" in report.results[0].error
    assert code == 1 and "notes: error (CorpusLocked)" in out and "1 corpus(es) failed" in err
    assert maintenance_log("notes")[-1]["action"] == "error"
    assert maintain(all=True).results[0].action == "built"


# ------------------------------------------------------------------ records


@pytest.fixture
def fetcher(env, monkeypatch):
    (env / "mods").mkdir()
    (env / "mods" / "feedmod.py").write_text(
        textwrap.dedent(f"""
        import json
        CALLS = []
        def papers():
            CALLS.append(1)
            with open({str(env / "papers.json")!r}) as fh:
                return json.load(fh)
    """)
    )
    (env / "papers.json").write_text(
        json.dumps(
            [
                {"id": 1, "text": "Laminar boundary layers", "year": 1960},
                {"id": 2, "text": "Shock waves on wedges", "year": 1962},
            ]
        )
    )
    monkeypatch.syspath_prepend(str(env / "mods"))
    monkeypatch.setenv("PYTHONPATH", str(env / "mods"))
    sys.modules.pop("feedmod", None)
    yield env / "papers.json"
    sys.modules.pop("feedmod", None)


def test_records_fetcher_module_attr(env, fetcher, capsys):
    registry.register(
        "papers",
        "records",
        fetcher="feedmod:papers",
        embedder="hashing:32",
        metadata_keys=["year"],
        maintenance="source-change",
    )
    assert actions(maintain(all=True)) == [("papers", "built", "never built")]
    assert maintain(all=True).nothing_to_do  # the fetched records hash as before
    records = json.loads(fetcher.read_text())
    records[1]["text"] = "Oblique shock waves on wedges"
    fetcher.write_text(json.dumps(records))
    r = maintain(all=True).results[0]
    assert (r.action, r.reason, r.counts["n_changed"]) == (
        "built",
        "source changed: the fetched records",
        1,
    )
    # the CLI, in a fresh process, twice: the second does nothing and says so
    for expect in ("papers: nothing to do (source unchanged)",) * 2:
        proc = subprocess.run(
            [sys.executable, "-m", "rowvoi", "maintain", "--all"],
            capture_output=True,
            text=True,
            env=quiet_env(),
        )
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.splitlines() == [expect, "nothing to do: every corpus is up to date"]


def test_bad_fetcher_path(env, capsys):
    registry.register("bad", "records", fetcher="no_such_module_xyz:f", embedder="hashing:32")
    files_corpus(env)
    with pytest.raises(ValueError, match="cannot import module 'no_such_module_xyz'"):
        maintain("bad")
    report = maintain(all=True)
    assert [(r.name, r.action) for r in report] == [("bad", "error"), ("notes", "built")]
    code, _out, err = run(capsys, "maintain", "bad")
    assert code == 1 and "cannot import module 'no_such_module_xyz'" in err
    assert [e["action"] for e in maintenance_log("bad")] == ["error"] * 3
    registry.register("bad", "records", fetcher="json:JSONDecodeError.nope", embedder="hashing:32")
    code, _out, err = run(capsys, "maintain", "bad")
    assert code == 1 and "has no attribute" in err


def test_fetcher_raising_anything_is_recorded_in_a_sweep(env, fetcher):
    fetcher.write_text("not json")
    registry.register("papers", "records", fetcher="feedmod:papers", embedder="hashing:32")
    files_corpus(env)
    report = maintain(all=True)
    assert [(r.name, r.action, r.reason) for r in report] == [
        ("notes", "built", "never built"),
        ("papers", "error", "JSONDecodeError"),
    ]
    assert report.errors == report.results[1:] and not report.nothing_to_do


def test_records_file(env):
    path = env / "papers.jsonl"
    path.write_text('{"id": "a", "text": "Lift"}\n{"id": "b", "text": "Drag"}\n')
    registry.register("papers", "records", path=str(path), embedder="hashing:32")
    assert maintain(all=True).results[0].action == "built"
    assert maintain(all=True).nothing_to_do
    path.write_text(
        '{"id": "a", "text": "Lift"}\n{"id": "b", "text": "Drag"}\n{"id": "c", "text": "Thrust"}\n'
    )
    r = maintain(all=True).results[0]
    assert (r.reason, r.counts["n_new"]) == ("source changed: the records file", 1)
    path.unlink()
    with pytest.raises(FileNotFoundError, match="the records file of this corpus is gone"):
        maintain("papers")


# ----------------------------------------------------------------- coverage


def test_coverage_categories(env, capsys):
    root = env / "notes"
    (root / "sub").mkdir()
    (root / "sub" / "deep.txt").write_text("Wake of a cylinder.")
    (root / "logo.md").write_bytes(b"\x89PNG\x00\x01")
    (root / "run.py").write_text("print(1)")
    (root / ".draft.md").write_text("hidden")
    (root / "node_modules").mkdir()
    (root / "node_modules" / "x.md").write_text("vendored")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref")
    files_corpus(env)
    r = coverage("notes")
    assert r.pending == ["pipe.md", "sub/deep.txt", "wing.md"] and r.indexed == []
    assert r.coverage_ratio == 0.0
    maintain(all=True)
    (root / "pipe.md").unlink()
    (root / "new.md").write_text("Flutter.")
    r = coverage("notes")
    assert r.on_disk == [".draft.md", "logo.md", "new.md", "run.py", "sub/deep.txt", "wing.md"]
    assert r.indexed == ["sub/deep.txt", "wing.md"] and r.pending == ["new.md"]
    assert r.excluded == {
        "pattern": ["run.py"],
        "binary": ["logo.md"],
        "hidden": [".draft.md"],
        "symlink": [],
        "special": [],
        "undecodable_name": [],
        "unreadable": [],
    }
    assert r.excluded_dirs == [".git", "node_modules"]
    assert r.missing == ["pipe.md"] and r.out_of_scope == []
    assert r.coverage_ratio == pytest.approx(2 / 3)
    # a narrower pattern: indexed files that no longer match are out of scope
    registry.register("notes", "files", root=str(root), pattern=r"\.md$", embedder="hashing:32")
    r = coverage("notes")
    assert r.out_of_scope == ["sub/deep.txt"] and "sub/deep.txt" in r.excluded["pattern"]
    code, out, _ = run(capsys, "coverage", "notes", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["counts"]["missing"] == 1 and doc["counts"]["excluded_binary"] == 1
    assert doc["missing"] == ["pipe.md"] and doc["coverage_ratio"] == pytest.approx(0.5)
    code, out, _ = run(capsys, "coverage", "notes")
    assert code == 0 and "missing            1  pipe.md" in out and "rowvoi maintain notes" in out
    maintain("notes")
    r = coverage("notes")
    assert r.missing == r.out_of_scope == r.pending == [] and r.coverage_ratio == 1.0


def test_coverage_bad_input(env, capsys):
    registry.register("feed", "records", fetcher="json:loads")
    with pytest.raises(ValueError, match="is a records corpus; coverage compares a files"):
        coverage("feed")
    code, _, err = run(capsys, "coverage", "ghost")
    assert code == 1 and "corpus 'ghost' is not registered" in err
    code, _, err = run(capsys, "coverage", "feed")
    assert code == 1 and "is a records corpus" in err
    files_corpus(env)
    (env / "notes" / "wing.md").unlink()
    (env / "notes" / "pipe.md").unlink()
    (env / "notes").rmdir()
    code, _, err = run(capsys, "coverage", "notes")
    assert code == 1 and "no such directory" in err


# ---------------------------------------------------------------------- CLI


def test_cli_maintain(env, capsys):
    code, out, _ = run(capsys, "maintain", "--all")
    assert code == 0 and out.startswith("no registered corpora")
    files_corpus(env)
    code, out, _ = run(capsys, "maintain", "--all", "--dry-run")
    assert code == 0 and out.splitlines() == [
        "notes: would build (never built)",
        "dry run: nothing was built or recorded",
    ]
    code, out, _ = run(capsys, "maintain", "--all")
    assert code == 0 and out.startswith("notes: built (never built) -- 2 new, 0 changed")
    code, out, _ = run(capsys, "maintain", "--all")
    assert code == 0 and out.splitlines() == [
        "notes: nothing to do (source unchanged)",
        "nothing to do: every corpus is up to date",
    ]
    code, out, _ = run(capsys, "maintain", "notes", "--json")
    doc = json.loads(out)
    assert doc["nothing_to_do"] and doc["results"][0]["action"] == "nothing to do"
    code, out, _ = run(capsys, "maintain", "notes", "--set-policy", "interval:6h")
    assert code == 0 and out.strip() == "corpus 'notes': maintenance policy interval:6h"
    code, out, _ = run(capsys, "maintain", "notes", "--log", "--json")
    assert [e["action"] for e in json.loads(out)["log"]] == [
        "built",
        "nothing to do",
        "nothing to do",
    ]
    code, out, _ = run(capsys, "maintain", "notes", "--log")
    assert code == 0 and "built  (never built)" in out.splitlines()[0]


@pytest.mark.parametrize(
    "argv, code, msg",
    [
        (["maintain"], 2, "give a corpus NAME or --all (not both)"),
        (["maintain", "notes", "--all"], 2, "give a corpus NAME or --all (not both)"),
        (["maintain", "notes", "--set-policy", "weekly"], 2, "policy 'weekly'"),
        (["maintain", "notes", "--set-policy", "interval:forever"], 2, "duration 'forever'"),
        (["maintain", "--all", "--set-policy", "manual"], 2, "--set-policy goes with one NAME"),
        (["maintain", "--all", "--log"], 2, "--log goes with one NAME"),
        (["maintain", "ghost"], 1, "corpus 'ghost' is not registered"),
        (["maintain", "ghost", "--set-policy", "manual"], 1, "corpus 'ghost' is not registered"),
        (["maintain", "ghost", "--log"], 1, "corpus 'ghost' is not registered"),
        (["maintain", "bad name"], 2, "corpus name 'bad name'"),  # wrong whatever the data
    ],
)
def test_cli_bad_input(env, capsys, argv, code, msg):
    files_corpus(env)
    got, _, err = run(capsys, *argv)
    assert got == code and msg in err, err


def test_help(capsys):
    for verb in ("maintain", "coverage"):
        code, out, _ = run(capsys, verb, "--help")
        assert code == 0 and f"usage: rowvoi {verb}" in out and "--json" in out


def test_api_bad_input(env):
    files_corpus(env)
    with pytest.raises(ValueError, match="give a corpus name or all=True"):
        maintain()
    with pytest.raises(ValueError, match="give a corpus name or all=True"):
        maintain("notes", all=True)
    with pytest.raises(CorpusNotFound, match="corpus 'ghost' is not registered"):
        maintain("ghost")
    with pytest.raises(ValueError, match="corpus name 'bad name'"):
        maintain("bad name")
    assert not maintenance_dir().exists()  # refused before anything was written
