/* The CSV writer (cowbench/output.h): RFC 4180, one header, the CSV fields in table order. */
#include <errno.h>
#include <stdio.h>

#include <cowbench/output.h>

static int csv_begin(struct cb_out *o)
{
	bool first = true;

	for (size_t i = 0; i < o->nf; i++) {
		if (!(o->f[i].flags & CB_FIELD_CSV))
			continue;
		if (!first)
			fputc(',', o->fp);
		first = false;
		cb_csv_write_field(o->fp, o->f[i].name);
	}
	return cb_record_end(o->fp);
}

static int csv_record(struct cb_out *o, const struct cb_val *v)
{
	bool first = true;
	int err = 0;

	for (size_t i = 0; i < o->nf && !err; i++) {
		if (!(o->f[i].flags & CB_FIELD_CSV))
			continue;
		if (!first)
			fputc(',', o->fp);
		first = false;
		switch (v[i].type) {
		case CB_VAL_NONE:
			break;
		case CB_VAL_NUM:
			err = cb_csv_number(o->fp, v[i].num, o->f[i].decimals);
			break;
		case CB_VAL_BOOL:
			fputc(v[i].num != 0 ? '1' : '0', o->fp);
			break;
		case CB_VAL_RAW:
		case CB_VAL_TEXT:
			err = cb_csv_write_field(o->fp, v[i].text);
			break;
		}
	}
	return err ? err : cb_record_end(o->fp);
}

const struct cb_out_writer cb_writer_csv = {
	.name = "csv",
	.begin = csv_begin,
	.record = csv_record,
};
