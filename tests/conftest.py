"""The test tiers (``bash scripts/test.sh``: quick; ``--long``; ``--all``).

The quick tier runs every test not marked ``slow`` (a long acceptance or
end-to-end run) or ``stress`` (kill loops, thread hammering, clusters,
exhaustive sweeps); the long tier runs those and every hypothesis test at
its full example count.  CI runs both.

Hypothesis profiles, chosen by the environment variable ``ROWVOI_HYPOTHESIS``:

* ``full`` (the default, and the long tier's): the example counts the tests
  ask for (``@settings(max_examples=...)``), random seeds as usual.
* ``quick`` (the quick tier's): at most ``QUICK_EXAMPLES`` examples per test,
  derandomized (a seed derived from the test), so the quick tier runs the
  same examples every time.  A test's own ``max_examples`` overrides any
  profile, so the cap is applied to each collected test below.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import sys
import tempfile
import unittest

import pytest
from hypothesis import settings

QUICK_EXAMPLES = 10

settings.register_profile("full")
settings.register_profile("quick", max_examples=QUICK_EXAMPLES, derandomize=True)
PROFILE = os.environ.get("ROWVOI_HYPOTHESIS", "full")
settings.load_profile(PROFILE)


def pytest_configure(config):
    """Every temporary file or folder made with :mod:`tempfile` without a
    ``dir`` -- by a test (the dask and kuzu tests' ``mkdtemp()``), a
    docstring's example, a fuzz target, or a subprocess a test starts
    (``TMPDIR``) -- goes under one folder of this run, removed when the
    run ends.  A quick run used to leave about 120 folders in /tmp, and
    the machine's disk filled up.  pytest's own ``tmp_path`` folders are
    made there too; to keep them for a look after a failure, run pytest
    with ``--basetemp DIR``."""
    root = tempfile.mkdtemp(prefix="rowvoi-tests-")
    config.stash[_TMP] = (root, tempfile.tempdir, os.environ.get("TMPDIR"))
    tempfile.tempdir = root
    os.environ["TMPDIR"] = root


def pytest_unconfigure(config):
    saved = config.stash.get(_TMP, None)
    if saved is None:
        return
    root, tempdir, env = saved
    tempfile.tempdir = tempdir
    if env is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = env
    # folders a test left without write or search permission are opened
    # up first, so that they go too
    for top, dirs, _ in os.walk(root):
        for d in dirs:
            path = os.path.join(top, d)
            if not os.path.islink(path):
                with contextlib.suppress(OSError):  # (what cannot be opened up stays)
                    os.chmod(path, stat.S_IRWXU)
    shutil.rmtree(root, ignore_errors=True)


_TMP = pytest.StashKey[tuple]()


def _capped(s: settings) -> settings:
    return settings(s, max_examples=min(s.max_examples, QUICK_EXAMPLES), derandomize=True)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    if PROFILE != "quick":
        return
    for item in items:
        cls = getattr(item, "cls", None)
        if (
            cls is not None
            and issubclass(cls, unittest.TestCase)
            and isinstance(getattr(cls, "settings", None), settings)
        ):  # a rule-based state machine's TestCase
            cls.settings = _capped(cls.settings)
            continue
        fn = getattr(item, "obj", None)
        fn = getattr(fn, "__func__", fn)  # a method's function
        if getattr(fn, "is_hypothesis_test", False):
            # what @settings(...) itself sets on the test it decorates
            current = getattr(fn, "_hypothesis_internal_use_settings", None)
            if not isinstance(current, settings):
                raise pytest.UsageError(
                    f"{item.nodeid}: cannot find the hypothesis settings of this test to cap "
                    "them for the quick tier (has hypothesis changed?); run the full "
                    "profile (ROWVOI_HYPOTHESIS=full) or update tests/conftest.py"
                )
            fn._hypothesis_internal_use_settings = _capped(current)


def pytest_collection_finish(session):
    """Under ``--dist loadgroup`` (scripts/test.sh) each worker adds the
    group of a test marked ``xdist_group`` to its node id, and the tests of a
    group run on one worker.  Some pytest/pytest-xdist pairs drop the groups
    silently (pytest-dev/pytest-xdist#1386): each worker would then build
    what a group shares (the Cranfield corpus: minutes) and wait for the
    other, so the run stops here instead."""
    config = session.config
    if not (os.environ.get("PYTEST_XDIST_WORKER") and getattr(config.option, "loadgroup", False)):
        return
    lost = [
        i.nodeid
        for i in session.items
        if i.get_closest_marker("xdist_group") and "@" not in i.nodeid
    ]
    if lost:
        raise pytest.UsageError(
            f"pytest-xdist did not apply the xdist_group marks ({lost[0]} and {len(lost) - 1} "
            "more have no group): install a pytest and pytest-xdist that work together "
            "(pyproject.toml's [test] extra pins them) or run with ROWVOI_TEST_JOBS=0"
        )


@pytest.fixture(autouse=True)
def _trace_function_kept():
    """A test that sets its own trace function (sys.settrace) gets the one
    before it back afterwards: coverage measurement (scripts/test.sh
    --coverage) runs through that hook and would stop at the first such test."""
    before = sys.gettrace()
    yield
    if sys.gettrace() is not before:
        sys.settrace(before)
