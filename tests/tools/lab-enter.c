// SPDX-License-Identifier: GPL-2.0
/*
 * lab-enter: run a command on one side of a lab, as the plan 'testenv.sh env'
 * prints does it (testenv/xdpsg/labexec.py), in one process instead of four.
 *
 *   lab-enter [--unready FILE] [--starting FILE] NETNS BPFFS TIMENS|- CMD [ARG...]
 *
 * The plan is "[nsenter --time=TIMENS] ip netns exec NETNS sh -c 'mount --bind
 * BPFFS /sys/fs/bpf; exec CMD'": a time namespace joined, then the network
 * namespace, a mount namespace of its own whose mounts never propagate back,
 * a /sys that describes the network namespace, and the lab's bpffs on
 * /sys/fs/bpf. This does the same steps with the system calls and then
 * becomes CMD. For an xdp-sink, lib.sh's lab_exec also names the lab's ready
 * file, removed here (--unready: a stale one must not say a new sink is
 * ready), and the starting file, where this process's pid (the sink's, once
 * it is CMD) is written and renamed into place (--starting), as the shell's rm
 * and mv did. The integration tests start some thousand commands in their
 * labs; each start through the plan was a fork and four executables, some
 * 30 ms of CPU on a busy 2-CPU VM (docs/HACKING.md, "A test").
 *
 * Exit status: CMD's; 127 if CMD cannot be run; 1 if a namespace or a mount
 * step fails (said on stderr, as ip and the plan's shell say it).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

static int join(const char *path, int type, const char *what)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || setns(fd, type)) {
		fprintf(stderr, "lab-enter: cannot enter the %s %s: %s\n", what, path,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* FILE holds this pid, whole or not at all: written beside it, then renamed. */
static int write_pid(const char *file)
{
	char tmp[4096], line[32];
	int fd, n = snprintf(line, sizeof(line), "%d\n", (int)getpid());

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", file) >= (int)sizeof(tmp))
		return -1;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	if (write(fd, line, (size_t)n) != n) {
		close(fd);
		return -1;
	}
	close(fd);
	return rename(tmp, file);
}

int main(int argc, char **argv)
{
	const char *unready = NULL, *starting = NULL;
	char path[4096];
	unsigned long flags = 0;
	struct statvfs st;

	while (argc > 2 && (!strcmp(argv[1], "--unready") || !strcmp(argv[1], "--starting"))) {
		if (argv[1][2] == 'u')
			unready = argv[2];
		else
			starting = argv[2];
		argc -= 2;
		argv += 2;
	}
	if (argc < 5) {
		fprintf(stderr,
			"usage: lab-enter [--unready FILE] [--starting FILE] NETNS BPFFS TIMENS|- CMD [ARG...]\n");
		return 2;
	}
	if (strchr(argv[1], '/') ||
	    snprintf(path, sizeof(path), "/run/netns/%s", argv[1]) >= (int)sizeof(path)) {
		fprintf(stderr, "lab-enter: '%s' is no network namespace name\n", argv[1]);
		return 2;
	}
	/* The time namespace first, as nsenter --time before ip netns exec. */
	if (strcmp(argv[3], "-") && join(argv[3], CLONE_NEWTIME, "time namespace"))
		return 1;
	if (join(path, CLONE_NEWNET, "network namespace"))
		return 1;
	/* ip netns exec's steps: its own mounts, none seen outside, a /sys of this namespace. */
	if (unshare(CLONE_NEWNS) || mount("", "/", "none", MS_SLAVE | MS_REC, NULL)) {
		fprintf(stderr, "lab-enter: cannot make a mount namespace: %s\n", strerror(errno));
		return 1;
	}
	/* Nothing on /sys is fine; a read-only /sys stays read-only. */
	umount2("/sys", MNT_DETACH);
	if (!statvfs("/sys", &st) && (st.f_flag & ST_RDONLY))
		flags = MS_RDONLY;
	if (mount(argv[1], "/sys", "sysfs", flags, NULL)) {
		fprintf(stderr, "lab-enter: cannot mount sysfs for %s: %s\n", argv[1],
			strerror(errno));
		return 1;
	}
	if (mount(argv[2], "/sys/fs/bpf", NULL, MS_BIND, NULL)) {
		fprintf(stderr, "testenv: cannot mount bpffs on /sys/fs/bpf: %s: %s\n", argv[2],
			strerror(errno));
		return 1;
	}
	if (unready && unlink(unready) && errno != ENOENT)
		fprintf(stderr, "lab-enter: cannot remove %s: %s\n", unready, strerror(errno));
	/* Without its pid there, the ready file is no one's to wait on. */
	if (starting && write_pid(starting)) {
		fprintf(stderr, "lab-enter: cannot write %s: %s\n", starting, strerror(errno));
		unsetenv("XDPSG_READY_FILE");
	}
	execvp(argv[4], argv + 4);
	fprintf(stderr, "lab-enter: %s: %s\n", argv[4], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
