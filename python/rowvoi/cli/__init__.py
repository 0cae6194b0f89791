"""The ``rowvoi`` command line: one package on top of the library.

Nothing below this package imports it. Its modules, from the top:

``main``
    the parser (:func:`rowvoi.cli.main.build_parser`) and the one place that
    runs a verb and turns its outcome into an exit code
    (:func:`rowvoi.cli.main.main`, the ``rowvoi`` console script and
    ``python -m rowvoi``);
verb modules, one per group of verbs, each registering its own
subparsers (``add_parsers(sub)``)
    ``tables`` (key, path, ask), ``rag`` (context, question), ``query``,
    ``corpus`` (build, register, search, ls, info, rm), ``maintain``
    (maintain, coverage), ``evaluate`` (eval, eval-select, sweep-select),
    ``graph``, ``discover``, ``calibrate``; a verb module imports no other
    verb module and not ``main``;
``_common``
    what every verb shares: the exit-code rule and its errors, every
    argument type, the readers of files named on the command line, and
    output (escaped text for people, exact JSON for programs).

This file re-exports nothing: ``rowvoi.cli.main`` is the module, its
``main`` the function.
"""
