#include <cowbench/version.h>

#ifndef COWBENCH_GIT_REVISION
#define COWBENCH_GIT_REVISION "unknown"
#endif

const char *cb_version(void)
{
	return CB_VERSION_STRING;
}

const char *cb_git_revision(void)
{
	return COWBENCH_GIT_REVISION;
}
