/*
 * Without clang's libFuzzer: run a fuzz target over files and directories
 * of inputs (the checked-in corpus), so a gcc build still replays every
 * case that once found a bug.
 */
#include "fuzz.h"

#include <dirent.h>
#include <sys/stat.h>

static int run_file(const char *path)
{
	FILE *fp = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!fp) {
		perror(path);
		return -1;
	}
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, fp) != (size_t)n) {
		fprintf(stderr, "%s: cannot read\n", path);
		fclose(fp);
		free(buf);
		return -1;
	}
	fclose(fp);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int runs = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		DIR *d;
		struct dirent *e;

		if (argv[i][0] == '-')
			continue; /* libFuzzer flags: ignored here */
		if (stat(argv[i], &st) < 0 || !S_ISDIR(st.st_mode)) {
			if (run_file(argv[i]) < 0)
				return 1;
			runs++;
			continue;
		}
		d = opendir(argv[i]);
		while (d && (e = readdir(d))) {
			char path[4096];

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			if (run_file(path) < 0)
				return 1;
			runs++;
		}
		if (d)
			closedir(d);
	}
	printf("replayed %d inputs without a crash\n", runs);
	return 0;
}
