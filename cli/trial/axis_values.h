/* One spelling per value of a run option or matrix axis (axis_values.c). */
#ifndef COWBENCH_CLI_AXIS_VALUES_H
#define COWBENCH_CLI_AXIS_VALUES_H

#include <stddef.h>

/*
 * One spelling per value (axis_values.c): sizes as cb_size_format writes
 * them (4096K -> 4M), counts without leading zeros, flags as 1/0; other
 * values and values that do not parse stay as they are.
 */
void cli_canonical_value(const char *axis, const char *value, char *out, size_t len);
/* Every axis of the matrix in that spelling, each value once; -ENOMEM. */
struct cb_matrix;
int cli_canonical_axes(struct cb_matrix *m);
/* A cell key ("name=value ...") rewritten in place in that spelling (when it fits in len). */
void cli_canonical_cell(char *cell, size_t len);

#endif
