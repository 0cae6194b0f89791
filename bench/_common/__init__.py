"""What every benchmark of ``bench/`` shares: timing (:mod:`.timing`), the
machine line (:mod:`.machine`), results files and the run context
(:mod:`.results`), and the data the suites read (:mod:`.cranfield`,
:mod:`.synth_corpus`, :mod:`.minilm`).  Nothing here imports rowvoi at
import time."""
