/*
 * What the writers (out_*.c) and the front (output.c, report.c) share from
 * out_cell.c beyond the public cell helpers of cowbench/output.h (not
 * installed). out_cell.c includes no writer and no front: the lowest unit.
 */
#ifndef COWBENCH_OUT_CELL_H
#define COWBENCH_OUT_CELL_H

#include <cowbench/output.h>

/** A failed write's cause (ENOSPC, EDQUOT, EPIPE...) from errno; -EIO only when stdio gives none. */
int cb_out_write_error(void);

/** The table's candidate columns in order (--columns' choice, or the view fields by pos); returns how many. */
size_t cb_out_view_fields(const struct cb_out *o, unsigned char *idx);

#endif
