"""Shared fixtures: small random categorical frames with fixed seeds."""

import numpy as np
import pandas as pd
import pytest


def random_frame(n_rows, n_cols, seed, max_card=6, unique=True):
    """A frame of small-cardinality integer columns; unique rows if asked."""
    rng = np.random.default_rng(seed)
    for _ in range(100):
        data = {
            f"c{j}": rng.integers(0, rng.integers(2, max_card + 1), n_rows) for j in range(n_cols)
        }
        df = pd.DataFrame(data)
        if not unique or not df.duplicated().any():
            return df
    raise RuntimeError("could not draw a frame without duplicate rows")


#: the few words of the fast-path tests' documents: many exact ties
TIE_WORDS = ["lift", "drag", "wing", "flow", "shock", "heat"]


def tie_docs(rng, n, fields):
    """``n`` documents of 1-3 words of :data:`TIE_WORDS` each (a title and a
    body when ``fields``), keyed by ids that do not follow their order."""
    docs = {}
    for i in range(n):
        words = lambda: " ".join(rng.choice(TIE_WORDS, size=rng.integers(1, 4)))  # noqa: E731
        docs[f"d{rng.integers(0, 10 * n):04d}-{i}"] = (
            {"title": words(), "body": words()} if fields else words()
        )
    return docs


def hit_rows(hits):
    """What two searches must agree on, hit for hit."""
    return [
        (h.artifact_id, h.surface_kind, h.surface_index, h.record_id, h.score, h.text, h.explain)
        for h in hits
    ]


@pytest.fixture
def frame_factory():
    return random_frame


# ------------------------------------------------- Cranfield with MiniLM
# Embedding the 1,400 Cranfield abstracts with MiniLM takes one to three
# minutes on two cores; two test modules need that corpus.  It is built
# once per run into a directory, closed (so docs.sqlite holds every
# committed page: the last connection to close checkpoints the WAL), and
# each module gets a copy of the directory: what one changes (a rebuild, a
# saved calibration) never reaches another.  Under pytest-xdist the workers
# share the one build (the first to need it builds it under a file lock in
# the run's temporary folder; the others wait for it).


@pytest.fixture(scope="session")
def _cranfield_minilm_dir(tmp_path_factory):
    import fcntl
    import os
    import shutil

    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the run's folder, above each worker's own
    root = base / "cranfield-minilm"
    path = root / "cranfield"
    with open(base / "cranfield-minilm.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (root / "built").exists():
            shutil.rmtree(root, ignore_errors=True)  # what a failed build left
            root.mkdir()
            _build_cranfield_minilm(path)
            (root / "built").touch()
    return path


def _build_cranfield_minilm(path):
    from test_corpus_cranfield import DOCS

    from rowvoi.corpus import CorpusStore, WholeText, build, from_mapping

    store = CorpusStore(path, name="cranfield")
    src = from_mapping(DOCS, name="cranfield", strategy=WholeText(), embedder="minilm")
    build(src, store=store, progress=False)
    store.close_writer()
    store.close()
    leftovers = sorted(p.name for p in path.iterdir() if p.name.endswith(("-wal", "-shm")))
    assert not leftovers, f"the corpus was not closed cleanly: {leftovers}"


@pytest.fixture(scope="module")
def cranfield_minilm(_cranfield_minilm_dir, tmp_path_factory):
    """A private copy of the Cranfield corpus built with MiniLM (WholeText,
    title and abstract as one surface), opened with its pinned embedder."""
    import shutil

    from rowvoi.corpus import CorpusStore, open_corpus

    path = tmp_path_factory.mktemp("cranfield-copy") / "cranfield"
    shutil.copytree(_cranfield_minilm_dir, path)
    return open_corpus("cranfield", store=CorpusStore(path, name="cranfield"))


@pytest.fixture(scope="module")
def cluster_client():
    """A Dask client of a 2-worker process LocalCluster, one per test module
    (its tests may kill a worker)."""
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=50,
        ) as cluster,
        Client(cluster) as c,
    ):
        yield c
