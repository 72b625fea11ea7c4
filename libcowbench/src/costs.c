#include <errno.h>
#include <stdlib.h>

#include <cowbench/costs.h>
#include <cowbench/hist.h>

void cb_costs_row_init(struct cb_row *row)
{
	row->copied_pages = row->precopy_wasted = row->anon_growth_kb = CB_NA;
	row->lat_hist = NULL;
}

/*
 * RssAnon and smaps' Anonymous do not move when a shared anonymous page is
 * copied (the counter swaps one anonymous page for another), so growth is
 * read from the private side: a copied page leaves Shared_* for
 * Private_Dirty, or Private_Clean when it was copied ahead and never written,
 * or Private_Hugetlb for a hugetlb page (absent from older kernels: 0).
 */
static int64_t private_kb(const struct cb_smaps *s)
{
	if (s->private_clean_kb < 0 || s->private_dirty_kb < 0)
		return -1;
	return s->private_clean_kb + s->private_dirty_kb + (s->private_hugetlb_kb > 0 ? s->private_hugetlb_kb : 0);
}

void cb_costs_fill_row(const struct cb_evidence *ev, struct cb_row *row)
{
	int64_t before = private_kb(&ev->w_before), after = private_kb(&ev->w_after);

	if (!ev->after_ran)
		return; /* the writer died before it was looked at: nothing whole to say */
	if (ev->err[CB_PROBE_PAGEMAP] == 0) {
		row->copied_pages = ev->pm.copied + ev->pm.copied_unwritten;
		row->precopy_wasted = ev->pm.copied_unwritten;
	}
	if (ev->err[CB_PROBE_SMAPS] == 0 && before >= 0 && after >= 0)
		row->anon_growth_kb = after - before;
}

int cb_costs_fill_hist(struct cb_row *row, const double *lat_ns, size_t n)
{
	struct cb_hist *h = malloc(sizeof(*h)); /* 35 KiB: not on the stack */
	size_t room;
	char *text = cb_row_room(row, &row->lat_hist, &room);
	long len;

	if (!h || !text) {
		free(h);
		row->lat_hist = NULL;
		return -ENOMEM;
	}
	cb_hist_reset(h);
	for (size_t i = 0; i < n; i++)
		cb_hist_record(h, lat_ns[i]);
	len = cb_hist_format(h, text, room);
	free(h);
	if (len <= 0)
		row->lat_hist = NULL; /* empty, or it did not fit */
	return len < 0 ? (int)len : 0;
}
