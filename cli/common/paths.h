/* Files cowbench reads: its data folders, inputs opened without blocking, copies (paths.c). */
#ifndef COWBENCH_CLI_PATHS_H
#define COWBENCH_CLI_PATHS_H

#include <stdio.h>

/*
 * Where a folder of data files lives (paths.c): $ENV_VAR, else the source
 * tree's when it holds MARKER (running from a build), else the installed one.
 */
const char *cli_find_dir(const char *env_var, const char *source_dir, const char *marker, const char *install_dir);
/* kernel/: $COWBENCH_KERNEL_DIR, the source tree, or share/cowbench/kernel. */
const char *cli_kernel_dir(void);
/* A named input opened for reading without waiting on a FIFO: NULL with errno (EINVAL: not a regular file). */
FILE *cli_fopen_input(const char *path);
/* A copy of a regular file as it is now (TO created, never replaced): 0 or -errno, TO removed on failure (paths.c). */
int cli_copy_file(const char *from, const char *to);

#endif
