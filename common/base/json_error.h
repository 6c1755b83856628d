/* SPDX-License-Identifier: GPL-2.0 */
#ifndef XDPSG_JSON_ERROR_H
#define XDPSG_JSON_ERROR_H

/*
 * Under --json, a failed run ends with one {"type":"error"} record on stdout,
 * so a consumer reading only the JSON lines learns why; the human line on
 * stderr stays as it is. The record's message is the first stderr line the
 * tool itself printed (its name first), which is the cause: later lines are
 * consequences (cleanup, hints).
 *
 * Both calls belong to main and its thread: json_error_arm() first, before any
 * message can be printed, and json_error_finish() on the exit code main
 * returns.
 */

/*
 * If argv asks for JSON (-j or --json before a "--"), route stderr through a
 * stream that writes every byte straight to fd 2 and remembers the lines. The
 * scan is ahead of option parsing so a bad option before -j is still caught.
 */
void json_error_arm(const char *tool, int argc, char **argv);

/* Print the error record when armed and code is not 0; returns code. */
int json_error_finish(int code);

#endif
