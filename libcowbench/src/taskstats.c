#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/taskstats.h>
#include <netlink/errno.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include <cowbench/error.h>
#include <cowbench/sysctl.h>
#include <cowbench/taskstats.h>

/* libnl does the generic-netlink plumbing (family lookup, attribute parsing) so we do not hand-roll it. */
struct cb_taskstats_sock {
	struct nl_sock *sk;
	int family;
	unsigned long overruns; /* times the kernel dropped exit records: the receive buffer was full */
};

/* The first kernel ABI that carries wpcopy_count / wpcopy_delay_total (Linux 5.19). */
#define WPCOPY_VERSION 13

/* libnl error codes back to errno for our callers. */
static int from_nlerr(int nlerr)
{
	switch (nlerr < 0 ? -nlerr : nlerr) {
	case NLE_PERM:
		return -EPERM;
	case NLE_NOMEM:
		return -ENOMEM;
	case NLE_OBJ_NOTFOUND:
		return -ESRCH;
	case NLE_INVAL:
		return -EINVAL;
	case NLE_OPNOTSUPP:
		return -EOPNOTSUPP;
	case NLE_NOACCESS:
		return -EACCES;
	default:
		return -EIO;
	}
}

int cb_taskstats_open(struct cb_taskstats_sock **out)
{
	struct cb_taskstats_sock *s = calloc(1, sizeof(*s));
	int err;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->sk = nl_socket_alloc();
	if (!s->sk) {
		free(s);
		return -ENOMEM;
	}
	err = genl_connect(s->sk);
	if (err < 0) {
		err = from_nlerr(err);
		goto fail;
	}
	s->family = genl_ctrl_resolve(s->sk, TASKSTATS_GENL_NAME);
	if (s->family < 0) {
		err = -ENOENT; /* kernel built without CONFIG_TASKSTATS */
		goto fail;
	}
	/* Errors come back as NLMSG_ERROR anyway; without auto-ack one reply ends a query. */
	nl_socket_disable_auto_ack(s->sk);
	*out = s;
	return 0;
fail:
	nl_socket_free(s->sk);
	free(s);
	return err;
}

void cb_taskstats_close(struct cb_taskstats_sock *s)
{
	if (!s)
		return;
	nl_socket_free(s->sk);
	free(s);
}

struct reply {
	struct taskstats ts;
	size_t len;
};

static int parse_reply(struct nl_msg *msg, void *arg)
{
	struct reply *r = arg;
	struct nlattr *attrs[TASKSTATS_TYPE_MAX + 1], *aggr, *a;
	int rem;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, attrs, TASKSTATS_TYPE_MAX, NULL) < 0)
		return NL_SKIP;
	aggr = attrs[TASKSTATS_TYPE_AGGR_PID] ? attrs[TASKSTATS_TYPE_AGGR_PID] : attrs[TASKSTATS_TYPE_AGGR_TGID];
	if (!aggr)
		return NL_SKIP;
	nla_for_each_nested(a, aggr, rem) {
		if (nla_type(a) != TASKSTATS_TYPE_STATS)
			continue;
		/* Newer kernels append fields: keep the prefix we know. */
		r->len = (size_t)nla_len(a) < sizeof(r->ts) ? (size_t)nla_len(a) : sizeof(r->ts);
		memcpy(&r->ts, nla_data(a), r->len);
	}
	return NL_OK;
}

static void convert(const struct taskstats *ts, struct cb_taskstats *out)
{
	memset(out, 0, sizeof(*out));
	out->version = ts->version;
	out->wpcopy_count = ts->wpcopy_count;
	out->wpcopy_delay_ns = ts->wpcopy_delay_total;
	out->minflt = ts->ac_minflt;
	out->majflt = ts->ac_majflt;
	out->cpu_run_real_ns = ts->cpu_run_real_total;
}

int cb_taskstats_query(struct cb_taskstats_sock *s, pid_t pid, bool tgid, struct cb_taskstats *out)
{
	struct reply r;
	struct nl_msg *msg;
	int err;

	memset(&r, 0, sizeof(r));
	msg = nlmsg_alloc();
	if (!msg)
		return -ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, s->family, 0, 0, TASKSTATS_CMD_GET, TASKSTATS_VERSION) ||
	    nla_put_u32(msg, tgid ? TASKSTATS_CMD_ATTR_TGID : TASKSTATS_CMD_ATTR_PID, (uint32_t)pid) < 0) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	err = nl_send_auto(s->sk, msg);
	nlmsg_free(msg);
	if (err < 0)
		return from_nlerr(err);
	nl_socket_modify_cb(s->sk, NL_CB_VALID, NL_CB_CUSTOM, parse_reply, &r);
	err = nl_recvmsgs_default(s->sk);
	if (err < 0)
		return from_nlerr(err);
	if (r.len < offsetof(struct taskstats, wpcopy_delay_total) + sizeof(r.ts.wpcopy_delay_total) ||
	    r.ts.version < WPCOPY_VERSION)
		return r.len ? -ENOTSUP : -EIO;
	convert(&r.ts, out);
	return 0;
}

/* The final records of exiting tasks, as the kernel multicasts them to registered listeners. */
struct exits {
	struct cb_taskstats_exit *out;
	int max, n;
};

static void parse_aggr(struct nlattr *aggr, bool group, struct exits *e)
{
	struct cb_taskstats_exit *x = &e->out[e->n];
	struct taskstats ts;
	bool have = false;
	struct nlattr *a;
	int rem;

	memset(x, 0, sizeof(*x));
	memset(&ts, 0, sizeof(ts));
	nla_for_each_nested(a, aggr, rem) {
		if (nla_type(a) == TASKSTATS_TYPE_PID || nla_type(a) == TASKSTATS_TYPE_TGID) {
			x->pid = (pid_t)nla_get_u32(a);
		} else if (nla_type(a) == TASKSTATS_TYPE_STATS) {
			memcpy(&ts, nla_data(a), (size_t)nla_len(a) < sizeof(ts) ? (size_t)nla_len(a) : sizeof(ts));
			have = true;
		}
	}
	if (!have || ts.version < WPCOPY_VERSION)
		return;
	convert(&ts, &x->ts);
	x->group = group;
	x->tgid = group ? x->pid : (pid_t)ts.ac_tgid;
	x->ppid = group ? 0 : (pid_t)ts.ac_ppid;
	e->n++;
}

static int parse_exit(struct nl_msg *msg, void *arg)
{
	struct exits *e = arg;
	struct nlattr *attrs[TASKSTATS_TYPE_MAX + 1];

	if (genlmsg_parse(nlmsg_hdr(msg), 0, attrs, TASKSTATS_TYPE_MAX, NULL) < 0)
		return NL_SKIP;
	if (attrs[TASKSTATS_TYPE_AGGR_PID] && e->n < e->max)
		parse_aggr(attrs[TASKSTATS_TYPE_AGGR_PID], false, e);
	if (attrs[TASKSTATS_TYPE_AGGR_TGID] && e->n < e->max)
		parse_aggr(attrs[TASKSTATS_TYPE_AGGR_TGID], true, e);
	return e->n < e->max ? NL_OK : NL_STOP;
}

int cb_taskstats_listen(struct cb_taskstats_sock **out)
{
	struct cb_taskstats_sock *s;
	struct nl_msg *msg;
	char mask[32];
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	int err = cb_taskstats_open(&s);

	if (err < 0)
		return err;
	snprintf(mask, sizeof(mask), "0-%ld", (ncpu > 0 ? ncpu : 1) - 1);
	msg = nlmsg_alloc();
	if (!msg || !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, s->family, 0, 0, TASKSTATS_CMD_GET,
				 TASKSTATS_VERSION) ||
	    nla_put_string(msg, TASKSTATS_CMD_ATTR_REGISTER_CPUMASK, mask) < 0) {
		nlmsg_free(msg);
		cb_taskstats_close(s);
		return -ENOMEM;
	}
	nl_socket_enable_auto_ack(s->sk); /* registering answers with an ack (or the error) only */
	err = nl_send_sync(s->sk, msg);   /* frees msg */
	if (err < 0) {
		cb_taskstats_close(s);
		return from_nlerr(err);
	}
	/* Records arrive unasked, with sequence number 0, and in bursts when many tasks exit. */
	nl_socket_disable_seq_check(s->sk);
	nl_socket_set_buffer_size(s->sk, 4 << 20, 0);
	/* Every exit on the machine lands here: as root, past net.core.rmem_max too (a busy machine). */
	{
		int sz = 16 << 20;

		setsockopt(nl_socket_get_fd(s->sk), SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz));
	}
	nl_socket_set_nonblocking(s->sk);
	nl_socket_modify_cb(s->sk, NL_CB_VALID, NL_CB_CUSTOM, parse_exit, NULL);
	*out = s;
	return 0;
}

int cb_taskstats_exits(struct cb_taskstats_sock *s, struct cb_taskstats_exit *out, int max)
{
	struct exits e = { .out = out, .max = max };
	int err;

	nl_socket_modify_cb(s->sk, NL_CB_VALID, NL_CB_CUSTOM, parse_exit, &e);
	while (e.n < max) {
		err = nl_recvmsgs_default(s->sk);
		if (err == -NLE_AGAIN)
			break;
		if (err == -NLE_NOMEM) { /* ENOBUFS: records were dropped; those after it still come */
			s->overruns++;
			continue;
		}
		if (err < 0)
			return e.n ? e.n : from_nlerr(err);
	}
	return e.n;
}

int cb_taskstats_fd(const struct cb_taskstats_sock *s)
{
	return nl_socket_get_fd(s->sk);
}

unsigned long cb_taskstats_overruns(const struct cb_taskstats_sock *s)
{
	return s->overruns;
}

int cb_delayacct_enabled(void)
{
	static bool joined;
	long v;
	int err = cb_sysctl_read_long(CB_DELAYACCT_SYSCTL, &v);

	if (err < 0)
		return err;
	/* On because another cowbench run turned it on: hold it with that run until we exit (sysctl.h). */
	if (v && !joined)
		joined = cb_sysctl_join(CB_DELAYACCT_SYSCTL) == 1;
	return v != 0;
}

int cb_delayacct_enable(void)
{
	int on = cb_delayacct_enabled();

	if (on < 0)
		return on;
	return on ? 0 : cb_sysctl_override(CB_DELAYACCT_SYSCTL, 1);
}

/* One COW copy in this thread, with a child holding the other mapping until we are done. */
static int probe_one_copy(struct cb_taskstats_sock *s, pid_t tid, uint64_t *delta)
{
	struct cb_taskstats t0, t1;
	volatile char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int hold[2], err, ws;
	pid_t pid;

	if (page == MAP_FAILED)
		return -errno;
	page[0] = 1;
	if (pipe2(hold, O_CLOEXEC) < 0) {
		err = -errno;
		munmap((void *)page, 4096);
		return err;
	}
	pid = fork();
	if (pid == 0) {
		char c;

		close(hold[1]);
		while (read(hold[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(hold[0]);
	err = pid < 0 ? -errno : cb_taskstats_query(s, tid, false, &t0);
	if (err == 0) {
		page[0] = 2; /* the copy */
		err = cb_taskstats_query(s, tid, false, &t1);
	}
	close(hold[1]);
	if (pid > 0)
		(void)cb_wait_status(pid, &ws);
	munmap((void *)page, 4096);
	if (err == 0)
		*delta = t1.wpcopy_count - t0.wpcopy_count;
	return err;
}

int cb_taskstats_self_accounted(struct cb_taskstats_sock *s)
{
	static pid_t cached_tid;
	static int cached;
	pid_t tid = gettid();
	uint64_t delta = 0;
	int err;

	if (cached_tid == tid)
		return cached;
	if (cb_delayacct_enabled() != 1)
		return 0; /* nothing is counted now, whoever we are */
	err = probe_one_copy(s, tid, &delta);
	if (err < 0)
		return err;
	cached_tid = tid;
	cached = delta > 0;
	return cached;
}
