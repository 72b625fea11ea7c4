/* The guest side of a --kernel matrix: the plan file its host wrote (one "REP[:ROUND] NAME=VALUE ..." line per rep). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/matrix.h>

#include "common/diag.h"
#include "common/args.h"
#include "common/paths.h"
#include "kernel_axis.h"

/* "REP" or "REP:ROUND" (the round id of an interleaved plan, 0: none). */
static bool parse_rep_round(const char *tok, long *rep, long *round)
{
	char buf[48], *colon;

	if (strlen(tok) >= sizeof(buf))
		return false;
	snprintf(buf, sizeof(buf), "%s", tok);
	colon = strchr(buf, ':');
	*round = 0;
	if (colon) {
		*colon = '\0';
		if (!cli_parse_long(colon + 1, 0, 1000000000, round))
			return false;
	}
	return cli_parse_long(buf, 1, 1000000, rep);
}

/* A plan line's key as a group of m (a group per distinct cell). */
static int plan_group(char *key, struct cb_matrix *m, size_t groups)
{
	char *save = NULL, why[256], group[32];

	snprintf(group, sizeof(group), "p%zu", groups);
	for (char *pair = strtok_r(key, " ", &save); pair; pair = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(pair, '=');

		if (!eq)
			return -1;
		*eq = '\0';
		if (cb_matrix_set_axis(m, group, pair, eq + 1, why, sizeof(why)) != 0)
			return -1;
	}
	return 0;
}

int mk_plan_load(const char *path, struct cb_matrix *m, struct mk_plan *plan)
{
	FILE *fp = cli_fopen_input(path);
	char line[1024];
	size_t lineno = 0;

	memset(plan, 0, sizeof(*plan));
	if (!fp) {
		cli_error("cannot read plan %s: %s", path, errno == EINVAL ? "not a regular file" : strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), fp)) {
		size_t n = plan->n;
		char **nk = realloc(plan->keys, (n + 1) * sizeof(*nk)), *sp;
		long *nr = realloc(plan->reps, (n + 1) * sizeof(*nr)), *nd = realloc(plan->rounds, (n + 1) * sizeof(*nd));
		bool seen = false;

		plan->keys = nk ? nk : plan->keys;
		plan->reps = nr ? nr : plan->reps;
		plan->rounds = nd ? nd : plan->rounds;
		lineno++;
		line[strcspn(line, "\n")] = '\0';
		if (!nk || !nr || !nd) {
			fclose(fp);
			cli_error("out of memory");
			return -1;
		}
		sp = strchr(line, ' ');
		if (!sp)
			goto bad;
		*sp = '\0';
		if (!parse_rep_round(line, &plan->reps[n], &plan->rounds[n]) || !(plan->keys[n] = strdup(sp + 1)))
			goto bad;
		plan->n++;
		for (size_t i = 0; i + 1 < plan->n && !seen; i++)
			seen = strcmp(plan->keys[i], sp + 1) == 0;
		if (!seen && plan_group(sp + 1, m, m->ngroups) < 0)
			goto bad;
	}
	fclose(fp);
	if (plan->n == 0) {
		cli_error("plan %s is empty", path);
		return -1;
	}
	return 0;
bad:
	fclose(fp);
	cli_error("%s:%zu: not a 'REP[:ROUND] NAME=VALUE ...' line", path, lineno);
	return -1;
}

void mk_plan_free(struct mk_plan *plan)
{
	for (size_t i = 0; i < plan->n; i++)
		free(plan->keys[i]);
	free(plan->keys);
	free(plan->reps);
	free(plan->rounds);
	memset(plan, 0, sizeof(*plan));
}
