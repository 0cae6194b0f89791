"""Peer adapters: the other side of a comparison, run by path in the peer's
own virtual environment (``python bench/peers/NAME.py ...``), without
rowvoi installed there; each says in its docstring which suite drives it
and how.  ``keys_driver`` and ``belief_driver`` run on both sides (this
checkout's rowvoi and the reference's); ``embed_st`` also lends its model
builder to the ``embed_invariance`` study."""
