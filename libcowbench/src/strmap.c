#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cowbench/strmap.h>

struct cb_strmap_slot {
	char *key; /* NULL: empty */
	uint64_t hash;
	size_t value;
};

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static struct cb_strmap_slot *probe(const struct cb_strmap *m, const char *key, uint64_t h)
{
	size_t i = (size_t)h & (m->cap - 1);

	while (m->slot[i].key && (m->slot[i].hash != h || strcmp(m->slot[i].key, key) != 0))
		i = (i + 1) & (m->cap - 1);
	return &m->slot[i];
}

static int grow(struct cb_strmap *m)
{
	struct cb_strmap old = *m;

	m->cap = old.cap ? old.cap * 2 : 64;
	m->slot = calloc(m->cap, sizeof(*m->slot));
	if (!m->slot) {
		*m = old;
		return -ENOMEM;
	}
	for (size_t i = 0; i < old.cap; i++)
		if (old.slot[i].key)
			*probe(m, old.slot[i].key, old.slot[i].hash) = old.slot[i];
	free(old.slot);
	return 0;
}

int cb_strmap_put(struct cb_strmap *m, const char *key, size_t value, size_t *old)
{
	uint64_t h = fnv1a(key);
	struct cb_strmap_slot *s;

	if ((m->n + 1) * 2 > m->cap && grow(m) < 0)
		return -ENOMEM;
	s = probe(m, key, h);
	if (s->key) {
		if (old)
			*old = s->value;
		return 0;
	}
	s->key = strdup(key);
	if (!s->key)
		return -ENOMEM;
	s->hash = h;
	s->value = value;
	m->n++;
	return 1;
}

bool cb_strmap_get(const struct cb_strmap *m, const char *key, size_t *value)
{
	const struct cb_strmap_slot *s;

	if (m->cap == 0)
		return false;
	s = probe(m, key, fnv1a(key));
	if (!s->key)
		return false;
	if (value)
		*value = s->value;
	return true;
}

int cb_strmap_add(struct cb_strmap *m, const char *key, size_t n)
{
	size_t old;
	int err = cb_strmap_put(m, key, n, &old);

	if (err == 0)
		probe(m, key, fnv1a(key))->value = old + n;
	return err < 0 ? err : 0;
}

static int by_value(const void *a, const void *b)
{
	const struct cb_strmap_entry *x = a, *y = b;

	if (x->value != y->value)
		return x->value > y->value ? -1 : 1;
	return strcmp(x->key, y->key);
}

struct cb_strmap_entry *cb_strmap_sorted(const struct cb_strmap *m, size_t *n)
{
	struct cb_strmap_entry *out = malloc((m->n ? m->n : 1) * sizeof(*out));

	*n = 0;
	if (!out)
		return NULL;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slot[i].key)
			out[(*n)++] = (struct cb_strmap_entry){ m->slot[i].key, m->slot[i].value };
	qsort(out, *n, sizeof(*out), by_value);
	return out;
}

void cb_strmap_free(struct cb_strmap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->slot[i].key);
	free(m->slot);
	memset(m, 0, sizeof(*m));
}
