/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_PARAMS_DOC_H
#define XDPSG_PARAMS_DOC_H

/*
 * The option tables as documentation: --help, the man page's OPTIONS and
 * --version --json, printed from the rows params_parse() reads.
 */
#include <stdio.h>
#include "cli/params.h"

/* --help for one command, defaults taken from the struct passed. */
void params_usage(FILE *out, const char *prog, const struct param_cmd *cmd, const void *defaults);

/* Overview of a multi-command tool. */
void params_usage_tool(FILE *out, const char *prog, const char *summary,
		       const struct param_cmd *const *cmds);

/*
 * The OPTIONS of one command as roff, for the man page: the same table that
 * drives getopt and --help, so the three never disagree.
 */
void params_man(FILE *out, const struct param_cmd *cmd, const void *defaults);

/*
 * All commands' options as roff subsections: each distinct table once, the
 * tables every command shares first. Tools print it for a hidden --man-options.
 */
void params_man_tool(FILE *out, const struct param_cmd *const *cmds, const void *defaults);

/*
 * --version --json: one JSON line for scripts that need to know what this
 * build can do: {"type":"version","tool","version","stamp_version",
 * "modes":[{"name","summary","options":[long names]}],"features":[every
 * option any mode takes]}. Documented in the README ("Feature discovery").
 */
void params_version_json(FILE *out, const char *prog, const struct param_cmd *const *cmds);

/* Call fn for every long option of cmd (used by the man-page test). */
void params_for_each(const struct param_cmd *cmd, void (*fn)(const struct param_def *, void *),
		     void *ctx);

#endif
