/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_OUTFILE_H
#define XDPSG_OUTFILE_H

/*
 * Files the tools write, written so that a run that fails leaves what was
 * there before, and so that a root tool never writes through a symlink: the
 * data goes to a new file in the same directory (O_CREAT | O_EXCL, which
 * follows no symlink), is flushed to disk and renamed over the target at the
 * end. A target that is a symlink, or not a regular file, is refused.
 * Killed (SIGKILL) between open and commit, a run leaves the target as it was
 * and the temporary file, PATH.tmp.XXXXXX, beside it.
 *
 *	outfile_check(path)        preflight: refuse now what would fail later
 *	outfile_open(&o, path)     when the run has its data
 *	fprintf(o.f, ...)
 *	outfile_commit(&o)         or outfile_abort(&o) on any failure
 */
#include <stdio.h>

struct outfile {
	FILE *f;
	char *path;
	char *tmp;
};

/*
 * 0, or -errno after one line on stderr naming the problem and the fix: the
 * target is a symlink or not a regular file, or its directory is missing or
 * not writable. Touches nothing.
 */
int outfile_check(const char *what, const char *path);

/* Open a temporary file beside path for writing; 0 or -errno (message printed). */
int outfile_open(struct outfile *o, const char *what, const char *path);

/*
 * Flush, sync and rename over the target (a symlink there by now is replaced,
 * not followed); the outfile is closed either way, and on failure the target
 * is as it was and the temporary file removed.
 */
int outfile_commit(struct outfile *o);

/* Close and remove the temporary file; the target is untouched. NULL-safe. */
void outfile_abort(struct outfile *o);

#endif
