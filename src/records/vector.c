/*
** Query vectors given as bytes: the float32 unit form (rv_unit_vector) and
** the nonzero test (rv_any_nonzero), for float32 or float64 components at
** any byte stride.
**
** The unit form is specified bit for bit (records.h): each square and each
** addition is one IEEE double rounding, in index order.  So this file is
** compiled without floating-point contraction (CMakeLists.txt gives it
** -ffp-contract=off; the pragma says the same to compilers that read it):
** a fused multiply-add would round v * v + s once, not twice.
*/
#include <math.h>
#include <string.h>

#include "../internal.h"

#if defined(__clang__)
#  pragma STDC FP_CONTRACT OFF
#endif

/* Component i of x as double (memcpy: no alignment assumed). */
static inline double rv__component(const char *x, ptrdiff_t stride, size_t i, int f64) {
    const char *p = x + (ptrdiff_t)i * stride;
    if (f64) {
        double v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    float v;
    memcpy(&v, p, sizeof v);
    return (double)v;
}

/* rv_unit_vector's arithmetic for one element type (f64 a constant at each
** call, so each type gets its own loop): the index of the first non-finite
** component, or SIZE_MAX with out written. */
static inline size_t rv__unit(const char *x, ptrdiff_t stride, size_t n, int f64, float *out) {
    double s = 0.0;
    for (size_t i = 0; i < n; i++) {
        double v = rv__component(x, stride, i, f64);
        double sq = v * v;
        s = s + sq;
    }
    if (!isfinite(s)) {
        /* a NaN or infinite component, or finite ones whose squares
        ** overflow (then the norm is inf) */
        for (size_t i = 0; i < n; i++)
            if (!isfinite(rv__component(x, stride, i, f64))) return i;
    }
    double norm = sqrt(s);
    if (norm > 0) {
        for (size_t i = 0; i < n; i++) out[i] = (float)(rv__component(x, stride, i, f64) / norm);
    } else {
        for (size_t i = 0; i < n; i++) out[i] = (float)rv__component(x, stride, i, f64);
    }
    return SIZE_MAX;
}

rv_status rv_unit_vector(const void *x, rv_real type, size_t n, ptrdiff_t stride, float *out) {
    if (type != RV_REAL_F32 && type != RV_REAL_F64)
        return rv__error(RV_E_INVALID_ARG, "type = %d: use RV_REAL_F32 or RV_REAL_F64", (int)type);
    int f64 = type == RV_REAL_F64;
    RV__CHECK_SIZE(n, f64 ? sizeof(double) : sizeof(float), "n");
    if (n == 0) return RV_OK;
    RV__NOT_NULL(x, "x");
    RV__NOT_NULL(out, "out");
    const char *xp = (const char *)x;
    size_t bad = f64 ? rv__unit(xp, stride, n, 1, out) : rv__unit(xp, stride, n, 0, out);
    if (bad != SIZE_MAX)
        return rv__error(RV_E_INVALID_ARG,
                         "x[%zu] = %g: the vector has a NaN or infinite component", bad,
                         rv__component(xp, stride, bad, f64));
    return RV_OK;
}

int rv_any_nonzero(const void *x, rv_real type, size_t n, ptrdiff_t stride) {
    if (!x || (type != RV_REAL_F32 && type != RV_REAL_F64)) return 0;
    int f64 = type == RV_REAL_F64;
    if (!rv__fits(n, f64 ? sizeof(double) : sizeof(float))) return 0;
    const char *xp = (const char *)x;
    for (size_t i = 0; i < n; i++)
        if (rv__component(xp, stride, i, f64) != 0) return 1;
    return 0;
}
