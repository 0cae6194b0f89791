/*
** rowvoi HNSW graph check: structural validation of a graph file written
** by hnswlib (HierarchicalNSW<float>::saveIndex) before hnswlib reads it.
**
** hnswlib trusts its files: a graph whose entry point, link count,
** neighbour id or element level was edited loads and then reads or writes
** out of bounds on the first search.  rv_hnsw_check proves, in one pass
** over the bytes and without trusting any field before it is checked, that
** every index hnswlib will follow is in range:
**
**   - the header (offsets, sizes, M, the level multiplier, ef_construction,
**     element count and capacity) against the file size and the caller's
**     description of the index (rv_hnsw_expect);
**   - level 0: every element's link count <= 2 M, every neighbour id an
**     element of the file, every vector component finite;
**   - the upper levels: every element's link-list block a whole number of
**     levels, the blocks ending exactly at the end of the file, every link
**     count <= M, every neighbour id an element that itself has that level;
**   - the entry point an element of the top level, no element above it
**     (an empty graph: no entry point and top level -1).
**
** The layout checked (hnswlib 0.6 - 0.8, 64-bit hosts, host byte order as
** hnswlib writes it; offsets in bytes):
**
**     0  8 offsetLevel0 (0)         48  4 top level (int32; -1 when empty)
**     8  8 capacity (max_elements)  52  4 entry point (uint32; ~0 when empty)
**    16  8 element count n          56  8 maxM (= M)
**    24  8 bytes per element        64  8 maxM0 (= 2 M)
**    32  8 label offset             72  8 M
**    40  8 vector offset            80  8 level multiplier (double, 1/ln M)
**                                   88  8 ef_construction (max(ef_c, M))
**    96    n elements of: uint32 level-0 link count (low 16 bits; bit 0 of
**          byte 2 marks the element deleted), 2 M uint32 neighbour ids,
**          dim float32 components, uint64 label
**          then for each element: uint32 byte size of its upper-level links
**          (levels * (4 + 4 M)), then per level 1 .. levels a uint32 link
**          count (low 16 bits) and M uint32 neighbour ids
**
** Cost: one pass over the bytes (two over the upper levels) and 4 bytes
** per element; 7.6 ms for 100,000 vectors of dimension 128 with M = 16 (a
** 66 MB file), about 2% of what rowvoi.index.hnsw.HNSWIndex.load takes for that
** index (python -m bench run hnsw_load, bench/results/hnsw_load.md).
**
** Thread-safety: reentrant; reads buf only.
*/
#ifndef ROWVOI_HNSW_H
#define ROWVOI_HNSW_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest graph degree M a checked file may have (HNSWIndex's own limit). */
#define RV_HNSW_MAX_M 1024u

/* Size in bytes of the header of an hnswlib graph file. */
#define RV_HNSW_HEADER_SIZE 96u

/*
** What the caller knows of the graph (rowvoi keeps it in hnsw.json); the
** file must agree with every field.  Initialise with rv_hnsw_expect_init.
*/
typedef struct rv_hnsw_expect {
    size_t dim;             /* float32 components per vector, 1 .. 65536 */
    size_t M;               /* graph degree, 2 .. RV_HNSW_MAX_M */
    size_t ef_construction; /* as given to hnswlib (>= 1); the file holds
                               max(ef_construction, M) */
    size_t element_count;   /* elements in the file, deleted ones included */
    size_t max_elements;    /* the capacity the file's header states */
} rv_hnsw_expect;

/* Fill *expect with zeros (every field must then be set).  Since: 0.1 */
RV_API void rv_hnsw_expect_init(rv_hnsw_expect *expect /* OUT */);

/* What rv_hnsw_check found in a file it accepted. */
typedef struct rv_hnsw_info {
    size_t element_count; /* elements, deleted ones included */
    size_t n_deleted;     /* elements marked deleted */
    size_t n_upper;       /* elements with links above level 0 */
    int32_t max_level;    /* top level; -1 for an empty graph */
    uint32_t entry_point; /* internal id of the entry point; UINT32_MAX
                              for an empty graph */
    size_t label_offset;  /* offset of element i's uint64 label:
                              RV_HNSW_HEADER_SIZE + i * element_size +
                              label_offset */
    size_t element_size;  /* bytes per level-0 element */
} rv_hnsw_info;

/*
** Check the bytes of an hnswlib graph file against expect.
** buf holds the whole file (size bytes; buf may be NULL when size is 0).
** Returns RV_OK and fills *info (which may be NULL) when hnswlib can load
** the file and search and extend the graph without reading or writing out
** of bounds; RV_E_CORRUPT with a message naming the first defect found
** (the field, the element and level, the value and the allowed range) when
** it cannot; RV_E_INVALID_ARG for expect NULL, buf NULL with size > 0, or
** an expect field out of its range; RV_E_RANGE for a size no buffer can
** have (core.h "Sizes"); RV_E_NOMEM (one uint32 per element is
** allocated for the levels).  Never reads outside buf.
** What it does not prove: that the graph is a good one (recall), that
** labels are unique or match another index (the caller checks those, with
** info's offsets), or anything of files from a host of other byte order or
** word size (they fail the checks).
** Thread-safety: reentrant.  Since: 0.1
*/
RV_API rv_status rv_hnsw_check(const void *buf, size_t size, const rv_hnsw_expect *expect,
                               rv_hnsw_info *info /* OUT */);

#ifdef __cplusplus
}
#endif

#endif /* ROWVOI_HNSW_H */
