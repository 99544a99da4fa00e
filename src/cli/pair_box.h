/* SPDX-License-Identifier: MIT */
/* ferry pair MODULE, run on the box (see pair_box.c). */
#ifndef FERRY_CLI_PAIR_BOX_H
#define FERRY_CLI_PAIR_BOX_H

/* Shows the code, waits up to valid_s seconds; an exit code. */
int pair_box(const char *config, const char *module, long valid_s);

#endif
