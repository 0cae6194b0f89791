"""Where named corpora and the corpus registry live.

* Corpora: ``$ROWVOI_HOME/corpora/NAME`` when ``ROWVOI_HOME`` is set, else
  ``$XDG_DATA_HOME/rowvoi/corpora/NAME`` (``XDG_DATA_HOME`` defaults to
  ``~/.local/share``).
* The registry ``corpora.json``: ``$ROWVOI_HOME/corpora.json``, else
  ``$XDG_CONFIG_HOME/rowvoi/corpora.json`` (default ``~/.config``).

The environment is read at each call, so a test (or a program) may point
``ROWVOI_HOME`` elsewhere at any time. Nothing here creates a directory:
only a build creates its corpus's folder.

Corpus names are checked, never rewritten: 1 to 128 characters from
``A-Z a-z 0-9 . _ -``, starting with a letter or digit.

Examples
--------
>>> import os
>>> os.environ["ROWVOI_HOME"] = "/tmp/rv-home"
>>> str(corpus_dir("papers")), str(registry_path())
('/tmp/rv-home/corpora/papers', '/tmp/rv-home/corpora.json')
>>> del os.environ["ROWVOI_HOME"]
>>> check_name("my notes")
Traceback (most recent call last):
...
ValueError: corpus name 'my notes': use 1-128 characters from A-Z a-z 0-9 . _ -, starting with a letter or digit
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["corpora_dir", "corpus_dir", "config_dir", "registry_path", "check_name"]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def check_name(name: object) -> str:
    """Return ``name`` if it is a valid corpus name, else raise.

    Raises
    ------
    TypeError
        ``name`` is not a str.
    ValueError
        It is empty, too long, or has a character outside ``A-Z a-z 0-9 .
        _ -`` (or starts with one of ``. _ -``); the message says so.

    Examples
    --------
    >>> check_name("cranfield-1.4")
    'cranfield-1.4'
    """
    if not isinstance(name, str):
        raise TypeError(f"a corpus name must be a str, not {type(name).__name__}")
    if not _NAME.match(name):
        raise ValueError(
            f"corpus name {name!r}: use 1-128 characters from A-Z a-z 0-9 . _ -, "
            "starting with a letter or digit"
        )
    return name


def _env_dir(var: str, default: str) -> Path:
    value = os.environ.get(var)
    return Path(value) if value else Path(os.path.expanduser(default))


def corpora_dir() -> Path:
    """The folder holding one sub-folder per named corpus.

    >>> import os; os.environ["ROWVOI_HOME"] = "/srv/rv"
    >>> str(corpora_dir())
    '/srv/rv/corpora'
    >>> del os.environ["ROWVOI_HOME"]
    """
    home = os.environ.get("ROWVOI_HOME")
    if home:
        return Path(home) / "corpora"
    return _env_dir("XDG_DATA_HOME", "~/.local/share") / "rowvoi" / "corpora"


def corpus_dir(name: str) -> Path:
    """The folder of the corpus called ``name`` (checked by
    :func:`check_name`; not created).

    >>> corpus_dir("notes").name
    'notes'
    """
    return corpora_dir() / check_name(name)


def config_dir() -> Path:
    """The folder holding ``corpora.json``.

    >>> import os; os.environ["XDG_CONFIG_HOME"] = "/cfg"
    >>> str(config_dir()) if "ROWVOI_HOME" not in os.environ else "/cfg/rowvoi"
    '/cfg/rowvoi'
    >>> del os.environ["XDG_CONFIG_HOME"]
    """
    home = os.environ.get("ROWVOI_HOME")
    if home:
        return Path(home)
    return _env_dir("XDG_CONFIG_HOME", "~/.config") / "rowvoi"


def registry_path() -> Path:
    """Path of the corpus registry, ``corpora.json``.

    >>> registry_path().name
    'corpora.json'
    """
    return config_dir() / "corpora.json"
