#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <cowbench/error.h>
#include <cowbench/workload.h>

#define CB_WORKLOAD(name) extern const struct cb_workload cb_workload_##name;
#include "workloads.def"
#undef CB_WORKLOAD

static const struct cb_workload *const table[] = {
#define CB_WORKLOAD(name) &cb_workload_##name,
#include "workloads.def"
#undef CB_WORKLOAD
};

#define TABLE_LEN (sizeof(table) / sizeof(table[0]))

size_t cb_workload_count(void)
{
	return TABLE_LEN;
}

const struct cb_workload *cb_workload_at(size_t i)
{
	return i < TABLE_LEN ? table[i] : NULL;
}

const struct cb_workload *cb_workload_find(const char *name)
{
	for (size_t i = 0; i < TABLE_LEN; i++)
		if (strcmp(table[i]->name, name) == 0)
			return table[i];
	return NULL;
}

const char *cb_workload_names(void)
{
	static char names[512];

	if (names[0])
		return names;
	for (size_t i = 0; i < TABLE_LEN; i++) {
		size_t used = strlen(names);

		snprintf(names + used, sizeof(names) - used, "%s%s", i ? ", " : "", table[i]->name);
	}
	return names;
}

static bool valid_name(const char *name)
{
	if (!name || !*name || strlen(name) > 31)
		return false;
	for (const char *p = name; *p; p++)
		if (!islower((unsigned char)*p) && !isdigit((unsigned char)*p) && *p != '_' && *p != '-')
			return false;
	return true;
}

static int reject(const struct cb_workload *w, size_t index, char *why, size_t len, const char *what)
{
	if (w && w->name && *w->name)
		snprintf(why, len, "workload table entry %zu (\"%s\"): %s", index, w->name, what);
	else
		snprintf(why, len, "workload table entry %zu: %s", index, what);
	return CB_EREGISTRY;
}

static int check_entry(const struct cb_workload *w, size_t index, char *why, size_t len)
{
	char opt_why[160];

	if (!w)
		return reject(w, index, why, len, "NULL entry");
	if (w->abi != CB_WORKLOAD_ABI)
		return reject(w, index, why, len, "wrong ABI version (set .abi = CB_WORKLOAD_ABI)");
	if (!valid_name(w->name))
		return reject(w, index, why, len, "name must be 1-31 characters of [a-z0-9_-]");
	if (!w->help || !*w->help || strchr(w->help, '\n'))
		return reject(w, index, why, len, "help must be one non-empty line");
	if (!w->page_order == !w->run)
		return reject(w, index, why, len, "needs exactly one of page_order or run");
	if (!w->options != !w->options_size)
		return reject(w, index, why, len, "options and options_size go together");
	if (cb_options_table_check(w->options, w->options_size, opt_why, sizeof(opt_why)) < 0)
		return reject(w, index, why, len, opt_why);
	return 0;
}

int cb_workload_check(const struct cb_workload *w, char *why, size_t len)
{
	return check_entry(w, 0, why, len);
}

int cb_workload_table_check(const struct cb_workload *const *t, size_t n, char *why, size_t len)
{
	for (size_t i = 0; i < n; i++) {
		int err = check_entry(t[i], i, why, len);

		if (err)
			return err;
		for (size_t j = 0; j < i; j++)
			if (strcmp(t[i]->name, t[j]->name) == 0)
				return reject(t[i], i, why, len, "duplicate name");
	}
	return 0;
}

int cb_registry_check(char *why, size_t len)
{
	return cb_workload_table_check(table, TABLE_LEN, why, len);
}
