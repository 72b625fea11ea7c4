#ifndef COWBENCH_COSTS_H
#define COWBENCH_COSTS_H

#include <stddef.h>

#include <cowbench/evidence.h>
#include <cowbench/report.h>

/*
 * What a page-order touch cost besides its time, for judging a look-ahead
 * such as the cowbench kernel's pre-copy: pages that got a frame of their
 * own (copied_pages), those of them the writer never wrote (precopy_wasted),
 * how much private memory the writer grew by (anon_growth_kb), and the whole
 * distribution of its first writes (lat_hist). Everything comes from what the
 * evidence probes read while the writer was held, never inside the loop.
 */

/** Mark the cost cells of a fresh row "not measured". */
void cb_costs_row_init(struct cb_row *row);
/**
 * Fill copied_pages and precopy_wasted (pagemap probe) and anon_growth_kb
 * (smaps probe) from ev; cells of a probe that did not measure stay empty.
 */
void cb_costs_fill_row(const struct cb_evidence *ev, struct cb_row *row);
/**
 * Record lat_ns[0..n) into a histogram (cowbench/hist.h) and point
 * row->lat_hist at its text, held by this thread until it measures its next
 * rep (cb_row_room): report the row before that. 0, -ENOMEM, or -ENOSPC
 * when the text does not fit (the cell stays empty).
 */
int cb_costs_fill_hist(struct cb_row *row, const double *lat_ns, size_t n);

#endif
