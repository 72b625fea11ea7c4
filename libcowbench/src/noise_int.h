/* What noise_explain.c and noise_rounds.c share (not installed). */
#ifndef COWBENCH_NOISE_INT_H
#define COWBENCH_NOISE_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <cowbench/repstats.h>

/*
 * A rank correlation co-varies when |rho| >= RHO_Z / sqrt(n - 1) (its null
 * distribution is about normal with variance 1 / (n - 1)): z = 2.73 is a
 * two-sided 5 % test Bonferroni-corrected for the 8 candidates (each test
 * at p < 0.00625). Never below MIN_RHO, so a large n does not make a weak
 * link a cause.
 */
#define RHO_Z 2.73
#define MIN_RHO 0.5

/** Spearman's rho of a and b (NAN when either is constant). */
double cb_spearman(const double *a, const double *b, size_t n);
/** A quotient metric whose spread comes from one of its parts: true with the line in buf. */
bool cb_noise_quotient_part(const struct cb_row_group *g, const char *metric, char *buf, size_t len);
/** The cells that ran in the same rounds as g rose and fell with it: 1 with the line in buf, 0, or -ENOMEM. */
int cb_noise_same_rounds(const struct cb_row_group *g, const struct cb_row_group *peers, size_t npeers,
			 const char *metric, char *buf, size_t len);

#endif
