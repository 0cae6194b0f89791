/*
** Selection of the k-th largest double (internal.h rv__kth_largest_f64):
** quickselect with a median-of-three pivot and branch-free partitions (the
** data decide no jumps); after 64 rounds (adversarial input) it sorts what
** is left, so the cost is O(n) expected and O(n log n) at worst.  Shared
** by the flat index's screen (its running floor) and the blend evidence's
** head (records.h rv_records_blend).
*/
#include <stdlib.h>

#include "../internal.h"

static int rv__cmp_double_desc(const void *pa, const void *pb) {
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a < b) - (a > b);
}

double rv__kth_largest_f64(double *v, size_t n, size_t k) {
    size_t lo = 0, hi = n, want = k - 1; /* position in descending order */
    for (int round = 0; hi - lo > 16 && round < 64; round++) {
        size_t mid = lo + (hi - lo) / 2;
        double a = v[lo], b = v[mid], c = v[hi - 1];
        double piv = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        size_t gt = lo; /* [lo, gt) > piv, then <= piv */
        for (size_t i = lo; i < hi; i++) {
            double x = v[i];
            size_t up = x > piv;
            v[i] = v[gt];
            v[gt] = x;
            gt += up;
        }
        if (want < gt) {
            hi = gt;
            continue;
        }
        size_t eq = gt; /* [gt, eq) == piv, then < piv */
        for (size_t i = gt; i < hi; i++) {
            double x = v[i];
            size_t same = x == piv;
            v[i] = v[eq];
            v[eq] = x;
            eq += same;
        }
        if (want < eq) return piv;
        lo = eq;
    }
    if (hi - lo > 16) {
        qsort(v + lo, hi - lo, sizeof *v, rv__cmp_double_desc);
        return v[want];
    }
    for (size_t i = lo + 1; i < hi; i++) { /* insertion sort, descending */
        double x = v[i];
        size_t j = i;
        while (j > lo && v[j - 1] < x) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
    return v[want];
}
