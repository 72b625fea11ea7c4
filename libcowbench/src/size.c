#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <cowbench/size.h>

static int suffix_shift(const char *s, unsigned *shift)
{
	static const struct { char c; unsigned shift; } units[] = {
		{ 'k', 10 }, { 'm', 20 }, { 'g', 30 }, { 't', 40 },
	};
	char c = *s;

	if (c == '\0') {
		*shift = 0;
		return 0;
	}
	if (c >= 'A' && c <= 'Z')
		c = (char)(c - 'A' + 'a');
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (units[i].c != c)
			continue;
		s++;
		/* Accept "M", "MB", "MiB": all binary here, as documented. */
		if (*s == '\0' || strcmp(s, "B") == 0 || strcmp(s, "iB") == 0) {
			*shift = units[i].shift;
			return 0;
		}
		return -EINVAL;
	}
	if (strcmp(s, "B") == 0 || strcmp(s, "b") == 0) {
		*shift = 0;
		return 0;
	}
	return -EINVAL;
}

int cb_size_parse(const char *text, uint64_t *bytes)
{
	uint64_t n = 0;
	unsigned shift;
	const char *p = text;

	if (!text || *text < '0' || *text > '9')
		return -EINVAL; /* empty, sign, space or letter first */
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (n > (UINT64_MAX - d) / 10)
			return -ERANGE;
		n = n * 10 + d;
	}
	if (suffix_shift(p, &shift) < 0)
		return -EINVAL;
	if (n == 0)
		return -EDOM;
	if (shift && n > (UINT64_MAX >> shift))
		return -ERANGE;
	*bytes = n << shift;
	return 0;
}

int cb_size_round_pages(uint64_t bytes, size_t page_size, uint64_t *rounded)
{
	uint64_t rem = bytes % page_size;

	if (rem == 0) {
		*rounded = bytes;
		return 0;
	}
	if (bytes > UINT64_MAX - (page_size - rem))
		return -ERANGE;
	*rounded = bytes + (page_size - rem);
	return 0;
}

void cb_size_format(uint64_t bytes, char *buf, size_t len)
{
	static const char units[] = "KMGT";
	int u = -1;

	while (u < 3 && bytes >= 1024 && bytes % 1024 == 0) {
		bytes /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%" PRIu64, bytes);
	else
		snprintf(buf, len, "%" PRIu64 "%c", bytes, units[u]);
}
