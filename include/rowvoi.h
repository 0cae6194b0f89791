/*
** rowvoi.h -- the public C API of the rowvoi engine.
**
** One header for C and C++ hosts.  It includes the per-area headers under
** rowvoi/; each function's comment states units, ownership, errors and
** thread-safety.  Link with -lrowvoi (pkg-config rowvoi, or CMake
** find_package(rowvoi) and the target rowvoi::rowvoi).
**
**   core.h   status codes, error messages, version, RNG, bitsets
**   cover.h  weighted set cover and the row-pair universe of keys
**   text.h   text analysis: UTF-8 normalisation, tokens, stopwords, stemmer
**   bm25.h   BM25 inverted index: build, search, explain, save/load
**   belief.h posterior updates, entropy and information gain (noise model)
**   flat.h   exact vector search (flat index): top-k, deletes, save/load
**   hnsw.h   structural check of hnswlib graph files before hnswlib loads them
**   hashing.h  feature-hashing text embedder (no model)
**   graph.h  link graph (CSR): hops, facts, similarity-ordered selections
**   records.h  record tables: a query's unit form, the hits of a dense search
**   encoder.h  the int8 MiniLM text encoder (vectors of token ids)
*/
#ifndef ROWVOI_H
#define ROWVOI_H

#include "rowvoi/version.h"
#include "rowvoi/core.h"
#include "rowvoi/cover.h"
#include "rowvoi/text.h"
#include "rowvoi/bm25.h"
#include "rowvoi/belief.h"
#include "rowvoi/flat.h"
#include "rowvoi/hnsw.h"
#include "rowvoi/hashing.h"
#include "rowvoi/graph.h"
#include "rowvoi/records.h"
#include "rowvoi/encoder.h"

#endif /* ROWVOI_H */
