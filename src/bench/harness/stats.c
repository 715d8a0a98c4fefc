#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void pt_sort_doubles(double *x, size_t n) { qsort(x, n, sizeof *x, cmp_double); }

double pt_quantile_sorted(const double *s, size_t n, double q)
{
    if (n == 0)
        return NAN;
    double h = (double)(n - 1) * q;
    size_t lo = (size_t)floor(h);
    if (lo >= n - 1)
        return s[n - 1];
    return s[lo] + (h - (double)lo) * (s[lo + 1] - s[lo]);
}

void pt_summarize(const double *samples, size_t n, pt_summary *out)
{
    double *s = malloc((n ? n : 1) * sizeof *s);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(samples[i]))
            s[m++] = samples[i];
    memset(out, 0, sizeof *out);
    out->n = m;
    if (m == 0) {
        out->median = out->p05 = out->p95 = out->mean = out->stdev = NAN;
        out->ci_lo = out->ci_hi = out->min = out->max = NAN;
        free(s);
        return;
    }
    pt_sort_doubles(s, m);
    out->min = s[0];
    out->max = s[m - 1];
    out->median = pt_quantile_sorted(s, m, 0.5);
    out->p05 = pt_quantile_sorted(s, m, 0.05);
    out->p95 = pt_quantile_sorted(s, m, 0.95);
    double sum = 0.0;
    for (size_t i = 0; i < m; i++)
        sum += s[i];
    out->mean = sum / (double)m;
    double ss = 0.0;
    for (size_t i = 0; i < m; i++)
        ss += (s[i] - out->mean) * (s[i] - out->mean);
    out->stdev = m > 1 ? sqrt(ss / (double)(m - 1)) : 0.0;
    if (m < 6) {
        out->ci_lo = s[0];
        out->ci_hi = s[m - 1];
    } else {
        double half = 0.98 * sqrt((double)m); /* 1.96 * sqrt(n) / 2 */
        long j = (long)floor((double)m / 2.0 - half);
        long k = (long)ceil((double)m / 2.0 + 1.0 + half);
        if (j < 1)
            j = 1;
        if (k > (long)m)
            k = (long)m;
        out->ci_lo = s[j - 1];
        out->ci_hi = s[k - 1];
    }
    free(s);
}
