#include <cowbench/error.h>
#include <cowbench/report.h>

#include "testutil.h"

static char *write_fields(const char *const *fields, int n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	for (int i = 0; i < n; i++) {
		if (i)
			fputc(',', fp);
		ck_assert_int_eq(cb_csv_write_field(fp, fields[i]), 0);
	}
	fputs("\r\n", fp);
	fclose(fp);
	return buf;
}

START_TEST(test_quoting)
{
	const char *const f[] = { "plain", "with,comma", "with \"quote\"", "two\nlines", "", "cr\rx" };
	char *line = write_fields(f, 6);

	ck_assert_str_eq(line, "plain,\"with,comma\",\"with \"\"quote\"\"\",\"two\nlines\",,\"cr\rx\"\r\n");
	free(line);
}
END_TEST

START_TEST(test_round_trip)
{
	const char *const f[] = { "a", "b,c", "\"", "x\r\ny", "", "AMD EPYC 7B13 64-Core", "end" };
	char *text = write_fields(f, 7);
	FILE *fp = fmemopen(text, strlen(text), "r");
	struct cb_csv_record rec = { 0 };

	ck_assert_int_eq(cb_csv_read_record(fp, &rec), 1);
	ck_assert_uint_eq(rec.nfields, 7);
	for (int i = 0; i < 7; i++)
		ck_assert_str_eq(rec.field[i], f[i]);
	ck_assert(rec.terminated);
	ck_assert_int_eq(cb_csv_read_record(fp, &rec), 0);
	cb_csv_record_free(&rec);
	fclose(fp);
	free(text);
}
END_TEST

START_TEST(test_torn_and_malformed)
{
	const char *torn = "a,b\r\nc,d";          /* last record lost its line end */
	const char *open_quote = "a,\"b\r\nc";    /* quote never closed */
	const char *stray = "a,b\"c\r\n";         /* quote inside an unquoted field */
	const char *after = "\"a\"x,b\r\n";       /* text after a closing quote */
	struct cb_csv_record rec = { 0 };
	FILE *fp = fmemopen((void *)torn, strlen(torn), "r");

	ck_assert_int_eq(cb_csv_read_record(fp, &rec), 1);
	ck_assert(rec.terminated);
	ck_assert_int_eq(cb_csv_read_record(fp, &rec), 1);
	ck_assert(!rec.terminated);
	ck_assert_str_eq(rec.field[1], "d");
	fclose(fp);
	fp = fmemopen((void *)open_quote, strlen(open_quote), "r");
	ck_assert_int_eq(cb_csv_read_record(fp, &rec), CB_EFORMAT);
	fclose(fp);
	fp = fmemopen((void *)stray, strlen(stray), "r");
	ck_assert_int_eq(cb_csv_read_record(fp, &rec), CB_EFORMAT);
	fclose(fp);
	fp = fmemopen((void *)after, strlen(after), "r");
	ck_assert_int_eq(cb_csv_read_record(fp, &rec), CB_EFORMAT);
	fclose(fp);
	cb_csv_record_free(&rec);
}
END_TEST

/* A row written by the report writer reads back with every column, empty where not measured. */
START_TEST(test_report_row)
{
	struct cb_row row;
	struct cb_report rep;
	struct cb_csv_record hdr = { 0 }, rec = { 0 };
	size_t ncol;
	const struct cb_column *cols = cb_columns(&ncol);
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	memset(&row, 0, sizeof(row));
	row.schema = CB_SCHEMA_VERSION;
	snprintf(row.workload, sizeof(row.workload), "seq");
	snprintf(row.cpu_model, sizeof(row.cpu_model), "Vendor, \"Model\" 9");
	row.elapsed_ns = 12345;
	row.cow_faults = CB_NA;
	row.lat_p50_ns = NAN;
	cb_report_init(&rep, fp, CB_FORMAT_CSV, false);
	ck_assert_int_eq(cb_report_row(&rep, &row), 0);
	ck_assert_int_eq(cb_report_finish(&rep), 0);
	fclose(fp);

	fp = fmemopen(buf, len, "r");
	ck_assert_int_eq(cb_csv_read_record(fp, &hdr), 1);
	ck_assert_int_eq(cb_csv_read_record(fp, &rec), 1);
	ck_assert_uint_eq(hdr.nfields, ncol);
	ck_assert_uint_eq(rec.nfields, ncol);
	for (size_t i = 0; i < ncol; i++) {
		ck_assert_str_eq(hdr.field[i], cols[i].name);
		if (strcmp(cols[i].name, "elapsed_ns") == 0)
			ck_assert_str_eq(rec.field[i], "12345");
		if (strcmp(cols[i].name, "cow_faults") == 0 || strcmp(cols[i].name, "lat_p50_ns") == 0)
			ck_assert_str_eq(rec.field[i], "");
		if (strcmp(cols[i].name, "cpu_model") == 0)
			ck_assert_str_eq(rec.field[i], "Vendor, \"Model\" 9");
	}
	ck_assert_str_eq(hdr.field[0], "schema");
	ck_assert_int_eq(atoi(rec.field[0]), CB_SCHEMA_VERSION);
	cb_csv_record_free(&hdr);
	cb_csv_record_free(&rec);
	fclose(fp);
	free(buf);
}
END_TEST

/*
 * docs/reference.md's CSV schema is `cowbench list --columns`: its list items
 * ("- `name`: meaning") after the "## CSV schema" heading name every column,
 * in the column table's order, and nothing else; every column's name is
 * unique and has help.
 */
START_TEST(test_columns_documented)
{
	size_t ncol, len, row = 0;
	const struct cb_column *cols = cb_columns(&ncol);
	char *doc = tu_slurp(CB_SOURCE_DIR "/docs/reference.md", &len);
	const char *schema, *line;

	ck_assert_ptr_nonnull(doc);
	schema = strstr(doc, "\n## CSV schema\n");
	ck_assert_msg(schema, "docs/reference.md has no \"## CSV schema\" section");
	for (line = schema + 1; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		char cell[96];

		if (strncmp(line, "## ", 3) == 0 && line != schema + 1)
			break; /* the next section */
		if (strncmp(line, "- `", 3) != 0)
			continue; /* continuation lines and prose */
		ck_assert_msg(row < ncol, "docs/reference.md documents a column the table does not have: %.40s", line);
		snprintf(cell, sizeof(cell), "- `%s`: ", cols[row].name);
		ck_assert_msg(strncmp(line, cell, strlen(cell)) == 0,
			      "docs/reference.md's schema row %zu should be column %s: %.40s", row + 1, cols[row].name, line);
		row++;
	}
	ck_assert_msg(row == ncol, "docs/reference.md documents %zu of %zu columns (next missing: %s)", row, ncol,
		      row < ncol ? cols[row].name : "");
	for (size_t i = 0; i < ncol; i++) {
		ck_assert_msg(cols[i].help && *cols[i].help, "column %s has no help", cols[i].name);
		for (size_t j = 0; j < i; j++)
			ck_assert_str_ne(cols[i].name, cols[j].name);
	}
	free(doc);
}
END_TEST

START_TEST(test_json_row)
{
	struct cb_row row;
	struct cb_report rep;
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	memset(&row, 0, sizeof(row));
	snprintf(row.status, sizeof(row.status), "quote\"back\\slash");
	row.cow_faults = CB_NA;
	row.lat_p50_ns = NAN;
	cb_report_init(&rep, fp, CB_FORMAT_JSON, false);
	ck_assert_int_eq(cb_report_row(&rep, &row), 0);
	fclose(fp);
	ck_assert_ptr_nonnull(strstr(buf, "\"status\":\"quote\\\"back\\\\slash\""));
	ck_assert_ptr_nonnull(strstr(buf, "\"cow_faults\":null"));
	ck_assert_ptr_nonnull(strstr(buf, "\"lat_p50_ns\":null"));
	ck_assert_int_eq(buf[0], '{');
	ck_assert_int_eq(buf[len - 1], '\n');
	free(buf);
}
END_TEST

/* One JSON escaper for rows and summaries: quotes, backslashes and control characters. */
START_TEST(test_json_string_escapes)
{
	char buf[64] = "";
	FILE *fp = fmemopen(buf, sizeof(buf), "w");

	ck_assert_ptr_nonnull(fp);
	cb_json_string(fp, "a\"b\\c\x01\n");
	fclose(fp);
	ck_assert_str_eq(buf, "\"a\\\"b\\\\c\\u0001\\u000a\"");
}
END_TEST

static Suite *csv_suite(void)
{
	Suite *s = suite_create("csv");
	TCase *tc = tcase_create("csv");

	tcase_add_test(tc, test_quoting);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_torn_and_malformed);
	tcase_add_test(tc, test_report_row);
	tcase_add_test(tc, test_columns_documented);
	tcase_add_test(tc, test_json_row);
	tcase_add_test(tc, test_json_string_escapes);
	suite_add_tcase(s, tc);
	return s;
}

TU_MAIN(csv_suite)
