/*
 * The guest's row stream (cli/guest/guest_rows.c): arbitrary bytes interleaved with
 * valid rows, fed in chunks of any size, as a serial port delivers them.
 * Whatever the bytes between them, every valid row must be taken once.
 */
#include "fuzz.h"

#include "guest_rows.h"

#define NCELLS 3
#define NREPS 2
#define NROWS (NCELLS * NREPS)

struct seen {
	unsigned char got[NROWS];
};

/* Rows of cells c0..c2, reps 1..2, status ok; anything else is not wanted. */
static int take(void *ctx, const struct cb_row *row)
{
	struct seen *s = ctx;

	for (int i = 0; i < NROWS; i++) {
		char cell[8];

		snprintf(cell, sizeof(cell), "c%d", i % NCELLS);
		if (strcmp(row->cell, cell) == 0 && row->rep == i / NCELLS + 1 && row->schema == 1 &&
		    strcmp(row->status, "ok") == 0) {
			if (s->got[i])
				return 1;
			s->got[i] = 1;
			return 0;
		}
	}
	return 1;
}

static void append(char **buf, size_t *len, const void *p, size_t n)
{
	char *nb = realloc(*buf, *len + n + 1);

	if (!nb)
		abort();
	memcpy(nb + *len, p, n);
	*buf = nb;
	*len += n;
}

/* header, then garbage piece k and a line end before row k, and the last piece after the last row. */
static char *build_stream(const uint8_t *g, size_t glen, size_t *len)
{
	static const char header[] = "schema,cell,rep,status\n";
	char *buf = NULL;

	*len = 0;
	append(&buf, len, header, sizeof(header) - 1);
	for (size_t k = 0; k <= NROWS; k++) {
		size_t from = k * glen / (NROWS + 1), to = (k + 1) * glen / (NROWS + 1);
		char row[64];

		append(&buf, len, g + from, to - from);
		append(&buf, len, "\n", 1);
		if (k < NROWS) {
			snprintf(row, sizeof(row), "1,c%zu,%zu,ok\n", k % NCELLS, k / NCELLS + 1);
			append(&buf, len, row, strlen(row));
		}
	}
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t chunk = size ? (size_t)data[0] + 1 : 64, len, fed = 0, have = 0;
	char *stream = build_stream(data + (size > 0), size - (size > 0), &len);
	char *buf = malloc(len + 1);
	struct seen seen = { { 0 } };
	struct gr_stream s;

	if (!buf)
		abort();
	gr_init(&s, take, &seen);
	while (fed < len) { /* as drain() reads: whatever arrived, then the unconsumed tail is kept */
		size_t n = len - fed < chunk ? len - fed : chunk, used;

		memcpy(buf + have, stream + fed, n);
		fed += n;
		have += n;
		used = gr_take(&s, buf, have, false);
		memmove(buf, buf + used, have - used);
		have -= used;
	}
	gr_take(&s, buf, have, true);
	for (int i = 0; i < NROWS; i++)
		if (!seen.got[i]) {
			fprintf(stderr, "valid row %d lost (%zu bad lines)\n", i, s.bad);
			abort();
		}
	if (s.rows != NROWS || s.foreign || s.err)
		abort();
	free(buf);
	free(stream);
	return 0;
}
