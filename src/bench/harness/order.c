/* Carry-over balanced orders (order.h). */
#include "order.h"

#include "rng.h"

int pt_order_period(int n) { return n % 2 ? 2 * n : n; }

void pt_order_row(int64_t row, int n, int *order)
{
    if (n < 1)
        return;
    int period = pt_order_period(n);
    int r = (int)(((row % period) + period) % period);
    int shift = r % n;
    /* The first row of a Williams square, 0, 1, n-1, 2, n-2, ...; row i adds i
     * to each entry (mod n). For an odd n the square's rows are followed by
     * the same rows reversed. */
    for (int j = 0; j < n; j++) {
        int base = j == 0 ? 0 : j % 2 ? (j + 1) / 2 : n - j / 2;
        order[j] = (base + shift) % n;
    }
    if (r >= n)
        for (int a = 0, b = n - 1; a < b; a++, b--) {
            int t = order[a];
            order[a] = order[b], order[b] = t;
        }
}

void pt_order_labels(uint64_t seed, int n, int *label)
{
    pt_rng g;
    pt_rng_seed(&g, seed, 0x6f72646572ULL /* "order" */, 0);
    for (int i = 0; i < n; i++)
        label[i] = i;
    pt_rng_shuffle(&g, label, n);
}
