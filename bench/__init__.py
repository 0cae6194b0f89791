"""rowvoi's benchmark suites, run from the repository root:

    python -m bench list
    python -m bench run NAME [--quick] [suite options ...]

See ``bench/README.md``: what each suite measures, against which peer, how
long it takes, how to set up the peers' environments, and the timing
method.  Importing this package imports nothing else.
"""
