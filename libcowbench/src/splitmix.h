/* The seeded generator of every bootstrap: splitmix64, so intervals are reproducible everywhere. */
#ifndef COWBENCH_SPLITMIX_H
#define COWBENCH_SPLITMIX_H

#include <stdint.h>

static inline uint64_t cb_splitmix64(uint64_t *st)
{
	uint64_t z = (*st += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#endif
