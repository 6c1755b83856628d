// SPDX-License-Identifier: GPL-2.0
/*
 * The option tables as documentation: --help, the man page's OPTIONS and
 * 'TOOL --version --json' are all printed from the rows params.c parses by,
 * so none of them can drift from what the tool accepts.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include "base/json_writer.h"
#include "base/log.h"
#include "cli/params.h"
#include "cli/params_doc.h"
#include "shared.h"

static const void *cfield(const void *cfg, const struct param_def *def)
{
	return (const char *)cfg + def->offset;
}

/* Worth showing as a default: not a flag, not zero, not empty. */
static bool shows_default(const struct param_def *d, const void *cfg, char *v, size_t len)
{
	const void *f = cfield(cfg, d);

	switch (d->type) {
	case PARAM_FLAG:
	case PARAM_COUNTER:
	case PARAM_STRINGS:
		return false;
	case PARAM_STRING:
	case PARAM_IFNAME:
		if (!*(const char *const *)f)
			return false;
		break;
	case PARAM_ENUM:
	case PARAM_LIST:
		break;
	default:
		if (!*(const __u64 *)f)
			return false;
	}
	params_format(d, cfg, v, len);
	return v[0] != '\0';
}

void params_usage(FILE *out, const char *prog, const struct param_cmd *cmd, const void *defaults)
{
	const struct param_def *d;
	char left[64], def[96];
	int i;

	/* A tool with one command (name "") has no command word. */
	fprintf(out, "Usage: %s%s%s [OPTIONS]%s%s\n\n", prog, cmd->name[0] ? " " : "", cmd->name,
		cmd->positional ? " " : "", cmd->positional ? cmd->positional : "");
	if (cmd->summary)
		fprintf(out, "%s\n", cmd->summary);
	if (cmd->description)
		fprintf(out, "\n%s\n", cmd->description);
	fprintf(out, "\nOptions:\n");
	for (i = 0; i < PARAM_TABLES_MAX && cmd->tables[i]; i++) {
		for (d = cmd->tables[i]; d->name; d++) {
			char sh[8] = "    ";

			if (d->short_opt)
				snprintf(sh, sizeof(sh), "-%c, ", d->short_opt);
			if (d->type == PARAM_FLAG || d->type == PARAM_COUNTER)
				snprintf(left, sizeof(left), "%s--%s", sh, d->name);
			else
				snprintf(left, sizeof(left), "%s--%s %s", sh, d->name,
					 d->metavar ? d->metavar : "VALUE");
			def[0] = '\0';
			if (defaults) {
				char v[64];

				if (shows_default(d, defaults, v, sizeof(v)))
					snprintf(def, sizeof(def), " (default %s)", v);
			}
			fprintf(out, "  %-28s %s%s\n", left, d->help ? d->help : "", def);
		}
	}
	fprintf(out, "  %-28s %s\n", "-h, --help", "show this help and exit");
	fprintf(out, "  %-28s %s\n", "    --version", "show the version and exit");
}

void params_usage_tool(FILE *out, const char *prog, const char *summary,
		       const struct param_cmd *const *cmds)
{
	const char *sep = "";
	int i;

	fprintf(out, "Usage: %s ", prog);
	for (i = 0; cmds[i]; i++) {
		fprintf(out, "%s%s", sep, cmds[i]->name);
		sep = "|";
	}
	fprintf(out, " [OPTIONS] IFNAME\n\n%s\n\nCommands:\n", summary);
	for (i = 0; cmds[i]; i++)
		fprintf(out, "  %-10s %s\n", cmds[i]->name, cmds[i]->summary);
	fprintf(out, "\nSee '%s COMMAND --help' for the options of each command.\n", prog);
}

#define PARAMS_NAMES_MAX 256

/* The long names of cmds[first..last]'s options, each once, in table order. */
static void json_options(struct jw *w, const char *key, const struct param_cmd *const *cmds,
			 unsigned int first, unsigned int last)
{
	const char *seen[PARAMS_NAMES_MAX];
	const struct param_def *d;
	unsigned int c, n = 0, i;
	int t;

	jw_arr(w, key);
	for (c = first; c <= last; c++)
		for (t = 0; t < PARAM_TABLES_MAX && cmds[c]->tables[t]; t++)
			for (d = cmds[c]->tables[t]; d->name; d++) {
				for (i = 0; i < n && strcmp(seen[i], d->name); i++)
					;
				if (i < n)
					continue;
				if (n < PARAMS_NAMES_MAX)
					seen[n++] = d->name;
				jw_str(w, NULL, d->name);
			}
	jw_end_arr(w);
}

void params_version_json(FILE *out, const char *prog, const struct param_cmd *const *cmds)
{
	unsigned int c, n = 0;
	struct jw w;

	while (cmds[n])
		n++;
	jw_begin(&w, out, "version");
	jw_str(&w, "tool", prog);
	jw_str(&w, "version", XDPSG_VERSION);
	jw_u64(&w, "stamp_version", XDPSG_STAMP_VERSION);
	jw_arr(&w, "modes");
	for (c = 0; c < n; c++) {
		jw_obj(&w, NULL);
		jw_str(&w, "name", cmds[c]->name);
		jw_str(&w, "summary", cmds[c]->summary);
		json_options(&w, "options", cmds, c, c);
		jw_end_obj(&w);
	}
	jw_end_arr(&w);
	/* What the tool can do in some mode: every option any mode takes, once. */
	if (n)
		json_options(&w, "features", cmds, 0, n - 1);
	jw_finish(&w);
}

void params_for_each(const struct param_cmd *cmd, void (*fn)(const struct param_def *, void *),
		     void *ctx)
{
	const struct param_def *d;
	int i;

	for (i = 0; i < PARAM_TABLES_MAX && cmd->tables[i]; i++)
		for (d = cmd->tables[i]; d->name; d++)
			fn(d, ctx);
}

static void roff_text(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '-' || *s == '\\')
			fputc('\\', out);
		fputc(*s, out);
	}
}

static void man_table(FILE *out, const struct param_def *table, const void *defaults)
{
	const struct param_def *d;
	char v[64];

	for (d = table; d->name; d++) {
		{
			fputs(".TP\n.B ", out);
			if (d->short_opt)
				fprintf(out, "\\-%c, ", d->short_opt);
			fputs("\\-\\-", out);
			roff_text(out, d->name);
			if (d->type != PARAM_FLAG && d->type != PARAM_COUNTER) {
				fputs(" \\fI", out);
				roff_text(out, d->metavar ? d->metavar : "VALUE");
				fputs("\\fR", out);
			}
			fputc('\n', out);
			roff_text(out, d->help);
			if (defaults && shows_default(d, defaults, v, sizeof(v))) {
				fputs(" (default ", out);
				roff_text(out, v);
				fputc(')', out);
			}
			fputs(".\n", out);
		}
	}
}

void params_man(FILE *out, const struct param_cmd *cmd, const void *defaults)
{
	int i;

	for (i = 0; i < PARAM_TABLES_MAX && cmd->tables[i]; i++)
		man_table(out, cmd->tables[i], defaults);
}

static bool table_in_all(const struct param_cmd *const *cmds, const struct param_def *t)
{
	int c, i;

	for (c = 0; cmds[c]; c++) {
		for (i = 0; i < PARAM_TABLES_MAX && cmds[c]->tables[i]; i++)
			if (cmds[c]->tables[i] == t)
				break;
		if (i == PARAM_TABLES_MAX || !cmds[c]->tables[i])
			return false;
	}
	return true;
}

/* ".SS Options of a, b" naming every command that takes table t. */
static void man_table_header(FILE *out, const struct param_cmd *const *cmds,
			     const struct param_def *t)
{
	int c, i, n = 0;

	fputs(".SS Options of ", out);
	for (c = 0; cmds[c]; c++)
		for (i = 0; i < PARAM_TABLES_MAX && cmds[c]->tables[i]; i++)
			if (cmds[c]->tables[i] == t) {
				fprintf(out, "%s%s", n++ ? ", " : "", cmds[c]->name);
				break;
			}
	fputs("\n", out);
}

void params_man_tool(FILE *out, const struct param_cmd *const *cmds, const void *defaults)
{
	const struct param_def *done[32];
	int c, i, j, ndone = 0;

	fputs(".SS Options of every command\n", out);
	for (i = 0; i < PARAM_TABLES_MAX && cmds[0] && cmds[0]->tables[i]; i++) {
		if (table_in_all(cmds, cmds[0]->tables[i]) && ndone < 32) {
			man_table(out, cmds[0]->tables[i], defaults);
			done[ndone++] = cmds[0]->tables[i];
		}
	}
	fputs(".TP\n.B \\-h, \\-\\-help\nshow the options of a command and exit.\n", out);
	fputs(".TP\n.B \\-\\-version\nshow the version and exit.\n", out);
	/* A table shared by some commands only is headed by all of them. */
	for (c = 0; cmds[c]; c++) {
		for (i = 0; i < PARAM_TABLES_MAX && cmds[c]->tables[i]; i++) {
			for (j = 0; j < ndone; j++)
				if (done[j] == cmds[c]->tables[i])
					break;
			if (j < ndone)
				continue;
			man_table_header(out, cmds, cmds[c]->tables[i]);
			man_table(out, cmds[c]->tables[i], defaults);
			if (ndone < 32)
				done[ndone++] = cmds[c]->tables[i];
		}
	}
}
