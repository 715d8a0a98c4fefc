/* Summary statistics of per-iteration samples. Every benchmark keeps all its
 * samples and summarises them the same way (docs/statistics.md):
 *   median, p05, p95  quantiles by linear interpolation between order statistics
 *                     (Hyndman-Fan type 7, as numpy's default);
 *   mean, stdev       arithmetic mean and sample standard deviation (n-1);
 *   ci_lo, ci_hi      a distribution-free 95% confidence interval of the median:
 *                     the order statistics x(j), x(k) with j, k from the binomial
 *                     B(n, 1/2) normal approximation, j = floor(n/2 - 0.98*sqrt(n)),
 *                     k = ceil(n/2 + 1 + 0.98*sqrt(n)) (1-based, clamped to [1, n]);
 *                     with n < 6 the interval is [min, max] (too few samples). */
#ifndef PT_STATS_H
#define PT_STATS_H
#include <stddef.h>

typedef struct pt_summary {
    size_t n;
    double median, p05, p95, mean, stdev, ci_lo, ci_hi, min, max;
} pt_summary;

/* Summarise n samples (not modified). NaN samples are left out of every figure
 * (n counts the rest). All fields are NaN when no sample is left. */
void pt_summarize(const double *samples, size_t n, pt_summary *out);
/* Quantile q in [0,1] of n sorted samples (type 7). */
double pt_quantile_sorted(const double *sorted, size_t n, double q);
void pt_sort_doubles(double *x, size_t n);

#endif
