"""The retrieval kernels: the bottom floor of the retrieval tower.

Each module is one kernel's face over the C engine (or hnswlib), and is
where its names are imported from:

* :mod:`rowvoi.index.text` -- the analyzer (Unicode normalisation,
  tokenizing, stopwords, the English stemmer);
* :mod:`rowvoi.index.embed` -- the MiniLM (onnxruntime) and feature-hashing
  embedders;
* :mod:`rowvoi.index.idset` -- id sets, the one filter type every search takes;
* :mod:`rowvoi.index.lexical` -- the BM25 inverted index;
* :mod:`rowvoi.index.flat` -- exact vector search, and what both vector
  indexes share;
* :mod:`rowvoi.index.hnsw` -- approximate vector search (HNSW).

Above them stand :mod:`rowvoi.query` (structured queries and filters),
:mod:`rowvoi.corpus` (corpora of documents) and :mod:`rowvoi.graph` (links
between them). Importing this package imports none of its modules.
"""

__all__ = ["embed", "flat", "hnsw", "idset", "lexical", "text"]
