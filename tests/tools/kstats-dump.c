// SPDX-License-Identifier: GPL-2.0
/*
 * kstats-dump: the kernel's per-layer counters of one interface (common/kern/kstats)
 * as JSON, for tests and for looking at a lab by hand.
 *   kstats-dump IFNAME                  one snapshot
 *   kstats-dump -i 1s -c 5 IFNAME       five deltas, one per second
 *   kstats-dump IFNAME -- CMD ARGS...   run CMD, print the delta across it
 * Each line is {"type":"snapshot"|"delta","ifname":..,"kstats":{..}}; with
 * -t, the human block instead; -v adds qdisc children and veth queues to it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fmt.h"
#include "base/json_writer.h"
#include "base/log.h"
#include "base/runtime.h"
#include "cli/params_cmd.h"
#include "kern/kstats.h"

struct cfg {
	__u64 interval;
	__u64 count;
	bool text;
	bool verbose;
};

#define OPT(f) offsetof(struct cfg, f)
static const struct param_def opts[] = {
	PARAM_OPT("interval", PARAM_DURATION, OPT(interval), .short_opt = 'i',
		  .metavar = "DURATION", .help = "print deltas over this period (0: one snapshot)"),
	PARAM_OPT("count", PARAM_UINT, OPT(count), .short_opt = 'c', .metavar = "N",
		  .help = "number of deltas with --interval", .min = 1),
	PARAM_OPT("text", PARAM_FLAG, OPT(text), .short_opt = 't',
		  .help = "human-readable block instead of JSON"),
	PARAM_OPT("verbose", PARAM_FLAG, OPT(verbose), .short_opt = 'v',
		  .help = "with --text: children and queues"),
	{},
};

static const struct param_cmd cmd = {
	.name = "",
	.summary = "print an interface's qdisc, link and veth counters",
	.description = "After '--', a command to run: the delta across it is printed and "
		       "its exit code returned.",
	.positional = "IFNAME",
	.tables = { opts, NULL },
};

static void emit(const struct cfg *c, const char *ifname, const char *type, const struct kstats *s)
{
	struct jw w;

	if (c->text) {
		kstats_print(stdout, ifname, s, c->verbose);
		fflush(stdout);
		return;
	}
	jw_begin(&w, stdout, type);
	jw_str(&w, "ifname", ifname);
	kstats_json(&w, "kstats", s);
	jw_finish(&w);
}

/* fork/exec/wait; the command's exit code, 127 if it could not run. */
static int run_cmd(char **argv)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "kstats-dump: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv)
{
	struct cfg c = { .count = 1 };
	const struct cfg defaults = c;
	struct kstats_reader *r = NULL;
	struct kstats *a = NULL, *b = NULL, *d = NULL;
	const char *ifname;
	char **sub = NULL;
	__u64 i;
	int err, ret = 1, sub_rc = 0;

	log_set_prog("kstats-dump");
	for (int k = 1; k < argc; k++) {
		if (!strcmp(argv[k], "--")) {
			argv[k] = NULL;
			sub = &argv[k + 1];
			argc = k;
			break;
		}
	}
	err = params_command("kstats-dump", &cmd, argc, argv, &c, &defaults, &ifname);
	if (err >= 0)
		return err;
	if (sub && !sub[0]) {
		fprintf(stderr, "kstats-dump: nothing after '--'; give a command to run\n");
		return 2;
	}
	err = kstats_reader__open(ifname, &r);
	if (err) {
		fprintf(stderr, "kstats-dump: %s: %s\n", ifname, strerror(-err));
		return err == -ENODEV ? 2 : 1;
	}
	a = calloc(1, sizeof(*a));
	b = calloc(1, sizeof(*b));
	d = calloc(1, sizeof(*d));
	if (!a || !b || !d)
		goto out;
	err = kstats_read(r, a);
	if (err)
		goto out_err;

	if (sub) {
		sub_rc = run_cmd(sub);
		if (sub_rc < 0) {
			err = sub_rc;
			goto out_err;
		}
		err = kstats_read(r, b);
		if (err)
			goto out_err;
		kstats_delta(b, a, b);
		emit(&c, ifname, "delta", b);
		ret = sub_rc;
		goto out;
	}
	if (!c.interval) {
		emit(&c, ifname, "snapshot", a);
		ret = 0;
		goto out;
	}
	runtime_install_signals();
	for (i = 0; i < c.count && !runtime_stop; i++) {
		struct kstats *t;

		runtime_sleep_until(a->t_ns + c.interval);
		err = kstats_read(r, b);
		if (err)
			goto out_err;
		kstats_delta(b, a, d);
		emit(&c, ifname, "delta", d);
		t = a;
		a = b;
		b = t;
	}
	ret = 0;
	goto out;
out_err:
	fprintf(stderr, "kstats-dump: reading %s: %s\n", ifname, strerror(-err));
	ret = 1;
out:
	free(a);
	free(b);
	free(d);
	kstats_reader__close(r);
	return ret;
}
