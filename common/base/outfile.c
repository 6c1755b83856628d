// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "base/outfile.h"

/* The directory part of path, in a new string ("." when there is none). */
static char *dir_of(const char *path)
{
	char *copy = strdup(path), *dir;

	if (!copy)
		return NULL;
	dir = strdup(dirname(copy));
	free(copy);
	return dir;
}

int outfile_check(const char *what, const char *path)
{
	struct stat st;
	char *dir;
	int err = 0;

	if (!lstat(path, &st)) {
		if (S_ISLNK(st.st_mode)) {
			pr_warn("%s %s is a symlink; refusing to write through it, give the real path\n",
				what, path);
			return -EINVAL;
		}
		if (!S_ISREG(st.st_mode)) {
			pr_warn("%s %s exists and is not a regular file; give a file name\n", what,
				path);
			return -EINVAL;
		}
	} else if (errno != ENOENT) {
		err = -errno;
		pr_warn("%s %s: %s; give a path that can be written\n", what, path, strerror(-err));
		return -EINVAL;
	}
	dir = dir_of(path);
	if (!dir)
		return -ENOMEM;
	if (stat(dir, &st) || !S_ISDIR(st.st_mode) || access(dir, W_OK | X_OK)) {
		pr_warn("%s %s: directory %s is missing or not writable; give a path in a writable directory\n",
			what, path, dir);
		err = -EINVAL;
	}
	free(dir);
	return err;
}

int outfile_open(struct outfile *o, const char *what, const char *path)
{
	mode_t mask;
	int fd, err;

	memset(o, 0, sizeof(*o));
	err = outfile_check(what, path);
	if (err)
		return err;
	o->path = strdup(path);
	if (!o->path || asprintf(&o->tmp, "%s.tmp.XXXXXX", path) < 0) {
		o->tmp = NULL;
		outfile_abort(o);
		return -ENOMEM;
	}
	/* mkostemp opens with O_CREAT | O_EXCL: it never follows a symlink. */
	fd = mkostemp(o->tmp, O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		err = -errno;
		pr_warn("%s %s: cannot create %s: %s; give a path in a writable directory\n", what,
			path, o->tmp, strerror(-err));
		free(o->tmp);
		o->tmp = NULL;
		outfile_abort(o);
		return err;
	}
	/* mkostemp makes the file 0600; give it what a new file would get. */
	mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	o->f = fdopen(fd, "w");
	if (!o->f) {
		err = -errno;
		close(fd);
		outfile_abort(o);
		return err;
	}
	return 0;
}

int outfile_commit(struct outfile *o)
{
	int err = 0;

	if (fflush(o->f) || fsync(fileno(o->f)))
		err = -errno;
	if (fclose(o->f) && !err)
		err = -errno;
	o->f = NULL;
	/*
	 * rename() replaces the name, never what a symlink there points to: a
	 * symlink that appeared since the check is replaced, and nothing is
	 * written through it. Refusing instead would lose the run's data, and a
	 * check here could not close the window before the rename anyway.
	 */
	if (!err && rename(o->tmp, o->path))
		err = -errno;
	if (err) {
		pr_warn("cannot write %s: %s\n", o->path, strerror(-err));
	} else {
		free(o->tmp); /* renamed: nothing left to remove */
		o->tmp = NULL;
	}
	outfile_abort(o);
	return err;
}

void outfile_abort(struct outfile *o)
{
	if (!o)
		return;
	if (o->f)
		fclose(o->f);
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	free(o->path);
	memset(o, 0, sizeof(*o));
}
