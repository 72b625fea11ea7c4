#include <string.h>

#include <cowbench/error.h>

const char *cb_strerror(int err)
{
	switch (err) {
	case CB_ECHILD:
		return "a child process failed";
	case CB_EFORMAT:
		return "malformed input";
	case CB_EREGISTRY:
		return "malformed workload table entry";
	case CB_ENOMEMAVAIL:
		return "not enough available memory";
	default:
		return strerror(err < 0 ? -err : err);
	}
}
