/* Least-squares line fits and protocol-segment detection for partita-loggp. */
#include "partita/model.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#define MIN_FIT 3

int ptm_fit_line(size_t n, const double *x, const double *y, const double *w,
                 double *a, double *b, double *rms_rel)
{
    double sw = 0, sx = 0, sy = 0;
    for (size_t i = 0; i < n; i++) {
        double wi = w ? w[i] : 1.0;
        sw += wi;
        sx += wi * x[i];
        sy += wi * y[i];
    }
    if (n < 2 || sw <= 0)
        return -1;
    double mx = sx / sw, my = sy / sw, sxx = 0, sxy = 0;
    for (size_t i = 0; i < n; i++) {
        double wi = w ? w[i] : 1.0;
        sxx += wi * (x[i] - mx) * (x[i] - mx);
        sxy += wi * (x[i] - mx) * (y[i] - my);
    }
    if (!(sxx > 0))
        return -1;
    *b = sxy / sxx;
    *a = my - *b * mx;
    if (rms_rel) {
        double s = 0;
        for (size_t i = 0; i < n; i++) {
            double r = (y[i] - (*a + *b * x[i])) / fmax(fabs(y[i]), 1e-12);
            s += r * r;
        }
        *rms_rel = sqrt(s / (double)n);
    }
    return 0;
}

/* Line through [lo, hi) weighted by 1/y^2, i.e. minimising relative residuals:
 * sizes are geometric, so plain least squares would ignore the small ones.
 * Points marked as outliers get no weight. */
static int fit_range(const double *x, const double *y, const unsigned char *outlier, size_t lo, size_t hi,
                     double *a, double *b)
{
    double *w = malloc((hi - lo) * sizeof *w);
    if (!w)
        return -1;
    for (size_t i = lo; i < hi; i++)
        w[i - lo] = outlier[i] ? 0.0 : 1.0 / fmax(y[i] * y[i], 1e-24);
    int rc = ptm_fit_line(hi - lo, x + lo, y + lo, w, a, b, NULL);
    if (rc == 0 && *b < 0) {
        /* Times never fall with the size: a falling line is noise on a flat piece,
         * and extrapolated to twice the size it would call every next point a miss. */
        double sw = 0, sy = 0;
        for (size_t i = lo; i < hi; i++) {
            sw += w[i - lo];
            sy += w[i - lo] * y[i];
        }
        *a = sy / sw;
        *b = 0;
    }
    free(w);
    return rc;
}

static double rel_miss(double a, double b, double x, double y)
{
    double pred = a + b * x;
    return (y - pred) / fmax(fabs(pred), 1e-12);
}

int ptm_detect_segments(size_t n, const double *x, const double *y, int max_seg,
                        double rel_tol, int lookahead, size_t *starts)
{
    if (max_seg < 1 || !starts || n == 0)
        return 0;
    if (lookahead < 2)
        lookahead = 2; /* a new piece needs two points for its own line */
    unsigned char *outlier = calloc(n, 1);
    if (!outlier)
        return 0;
    int nseg = 1;
    size_t lo = 0;
    starts[0] = 0;
    /* A piece's line is trusted from MIN_FIT points on: a line through two noisy
     * points extrapolates wildly. */
    for (size_t i = lo + MIN_FIT; i < n; i++) {
        double a, b;
        if (fit_range(x, y, outlier, lo, i, &a, &b))
            continue;
        double first = rel_miss(a, b, x[i], y[i]);
        if (fabs(first) <= rel_tol)
            continue;
        /* Point i misses: a switch when the next lookahead-1 points miss the same way by
         * at least half as much (after a jump the old and new lines can converge, as a
         * rendezvous protocol often has the higher bandwidth), else a lone outlier that
         * is left out of later fits. */
        int misses = 1;
        for (size_t k = i + 1; k < i + (size_t)lookahead && k < n; k++) {
            double r = rel_miss(a, b, x[k], y[k]);
            if (fabs(r) > rel_tol / 2 && (r > 0) == (first > 0))
                misses++;
        }
        if (misses == lookahead && nseg < max_seg) {
            starts[nseg++] = i;
            lo = i;
            i = lo + MIN_FIT - 1; /* the loop increment makes it lo + MIN_FIT */
        } else if (misses < lookahead) {
            outlier[i] = 1;
        }
    }
    free(outlier);
    return nseg;
}
