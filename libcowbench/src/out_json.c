/*
 * The JSON Lines writer (cowbench/output.h): one object per record, the
 * JSON fields in table order; a value not measured is null (or, for a
 * CB_FIELD_OMIT_NULL field, no key).
 */
#include <stdio.h>

#include <cowbench/output.h>

static int json_record(struct cb_out *o, const struct cb_val *v)
{
	bool first = true;

	fputc('{', o->fp);
	for (size_t i = 0; i < o->nf; i++) {
		const struct cb_field *f = &o->f[i];

		if (!(f->flags & CB_FIELD_JSON) || (v[i].type == CB_VAL_NONE && (f->flags & CB_FIELD_OMIT_NULL)))
			continue;
		if (!first)
			fputc(',', o->fp);
		first = false;
		cb_json_string(o->fp, f->name);
		fputc(':', o->fp);
		switch (v[i].type) {
		case CB_VAL_NONE:
			fputs("null", o->fp);
			break;
		case CB_VAL_NUM:
			/* cb_json_number writes ",name:value": print the value alone the same way. */
			if (v[i].num == v[i].num && v[i].num - v[i].num == 0)
				fprintf(o->fp, "%.10g", v[i].num);
			else
				fputs("null", o->fp);
			break;
		case CB_VAL_BOOL:
			fputs(v[i].num != 0 ? "true" : "false", o->fp);
			break;
		case CB_VAL_RAW:
			fputs(v[i].text[0] ? v[i].text : "null", o->fp);
			break;
		case CB_VAL_TEXT:
			if (f->kind == CB_KIND_TEXT || v[i].text[0])
				cb_json_string(o->fp, v[i].text);
			else
				fputs("null", o->fp);
			break;
		}
	}
	fputc('}', o->fp);
	return cb_record_end(o->fp);
}

const struct cb_out_writer cb_writer_json = {
	.name = "json",
	.record = json_record,
};
