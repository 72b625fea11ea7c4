#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cowbench/cowbench.h>

#include "common/paths.h"
#include "info.h"

/* cowbench info: can the matrix's --kernel=stock,patched guests run here, and if not, why. */

static void line(const char *key, const char *value)
{
	printf("%-22s %s\n", key, value);
}

/* A program on $PATH (no shell: the search is done here). */
static bool on_path(const char *prog)
{
	const char *path = getenv("PATH");
	char dir[4096];

	for (const char *p = path ? path : "/usr/bin:/bin"; p && *p;) {
		const char *colon = strchr(p, ':');
		size_t n = colon ? (size_t)(colon - p) : strlen(p);

		snprintf(dir, sizeof(dir), "%.*s/%s", (int)n, p, prog);
		if (access(dir, X_OK) == 0)
			return true;
		p = colon ? colon + 1 : NULL;
	}
	return false;
}

static const char *cache_root(char *buf, size_t len, const char *sub)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");

	if (xdg && *xdg)
		snprintf(buf, len, "%s/cowbench%s", xdg, sub);
	else
		snprintf(buf, len, "%s/.cache/cowbench%s", home ? home : "/root", sub);
	return buf;
}

/* kernel/build.sh caches <root>/6.12-<flavour>-<hash>/bzImage. */
static void cached_images(char *out, size_t len)
{
	char root[4096], img[8192];
	const char *env = getenv("COWBENCH_KERNEL_CACHE");
	DIR *d;
	struct dirent *e;
	size_t off = 0;

	if (env && *env)
		snprintf(root, sizeof(root), "%s", env);
	else
		cache_root(root, sizeof(root), "/kernel");
	out[0] = '\0';
	d = opendir(root);
	while (d && (e = readdir(d))) {
		snprintf(img, sizeof(img), "%s/%s/bzImage", root, e->d_name);
		if (e->d_name[0] == '.' || !cb_path_exists(img) || off >= len)
			continue;
		off += (size_t)snprintf(out + off, len - off, "%s%s", off ? ", " : "", e->d_name);
	}
	if (d)
		closedir(d);
	if (!out[0])
		snprintf(out, len, "none yet (the first --kernel=stock/patched run builds each, a few minutes)");
}

/* vm-run.sh caches the result of its KVM probe boot per host kernel; until then TCG is assumed. */
static void accel(char *out, size_t len)
{
	char root[4096];
	DIR *d = opendir(cache_root(root, sizeof(root), ""));
	struct dirent *e;
	bool kvm = false, probed = false;

	while (d && (e = readdir(d))) {
		char path[8192], v[8] = "";
		FILE *fp;

		if (strncmp(e->d_name, "kvm-probe-", 10) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", root, e->d_name);
		fp = fopen(path, "re");
		if (fp && fgets(v, sizeof(v), fp)) {
			probed = true;
			kvm = kvm || strncmp(v, "kvm", 3) == 0;
		}
		if (fp)
			fclose(fp);
	}
	if (d)
		closedir(d);
	if (kvm)
		snprintf(out, len, "KVM (a probe boot worked)");
	else if (probed || access("/dev/kvm", R_OK | W_OK) != 0)
		snprintf(out, len, "TCG (emulated: fault counts exact, times comparable only inside one boot)%s",
			 probed ? "; a KVM probe boot failed" : "; no usable /dev/kvm");
	else
		snprintf(out, len, "TCG, or KVM if the first boot's probe works (/dev/kvm opens)");
}

void cli_guest_info(void)
{
	const char *dir = cli_kernel_dir(), *guest = getenv("COWBENCH_GUEST_COWBENCH");
	char script[4096], repo[4096], buf[1024];
	bool tools, qemu = on_path("qemu-system-x86_64");

	snprintf(script, sizeof(script), "%s/vm-run.sh", dir);
	tools = access(script, X_OK) == 0;
	snprintf(repo, sizeof(repo), "%s/../CMakeLists.txt", dir); /* vm-run.sh builds the guest's cowbench there */
	snprintf(buf, sizeof(buf), "%s%s", dir, tools ? "" : " (missing: set COWBENCH_KERNEL_DIR to a kernel/ folder)");
	line("kernel tooling:", buf);
	line("qemu:", qemu ? "qemu-system-x86_64 found" :
			     "absent (kernel/vm-run.sh installs qemu-system-x86 with apt as root)");
	accel(buf, sizeof(buf));
	line("guest accel:", buf);
	cached_images(buf, sizeof(buf));
	line("guest kernels cached:", buf);
	if (!cb_path_exists("/usr/src/linux-source-6.12.tar.xz") && !strstr(buf, "6.12-"))
		line("kernel source:", "absent (kernel/build.sh installs linux-source-6.12 with apt as root)");
	bool has_guest = (guest && *guest) || (tools && cb_path_exists(repo));

	if (guest && *guest)
		snprintf(buf, sizeof(buf), "%s ($COWBENCH_GUEST_COWBENCH)", guest);
	else
		snprintf(buf, sizeof(buf), "%s", tools && cb_path_exists(repo) ?
						 "built static from the source tree on first use (build-static/)" :
						 "needs COWBENCH_GUEST_COWBENCH=a static cowbench (no source tree here)");
	line("guest cowbench:", buf);
	if (!tools)
		line("--kernel guests:", "cannot run: no kernel tooling");
	else if (!has_guest)
		line("--kernel guests:", "cannot run: no static cowbench for the guest (set COWBENCH_GUEST_COWBENCH)");
	else if (!qemu && getuid() != 0)
		line("--kernel guests:", "cannot run: no QEMU, and installing it needs root");
	else
		line("--kernel guests:", qemu ? "can run" : "can run once QEMU is installed (first use, as root)");
}
