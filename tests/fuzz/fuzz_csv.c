/* cb_csv_read_record: every record of any bytes, until end of file or an error. */
#include "fuzz.h"

#include <cowbench/report.h>


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cb_csv_record rec = { 0 };
	FILE *fp = fmemopen((void *)data, size ? size : 1, "r");
	int rc;

	if (!fp)
		return 0;
	if (size == 0) {
		fclose(fp);
		return 0;
	}
	while ((rc = cb_csv_read_record(fp, &rec)) == 1)
		for (size_t i = 0; i < rec.nfields; i++)
			(void)strlen(rec.field[i]);
	cb_csv_record_free(&rec);
	fclose(fp);
	return 0;
}
