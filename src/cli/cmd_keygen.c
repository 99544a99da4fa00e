/* SPDX-License-Identifier: MIT */
/* ferry keygen [-f FILE] [-C COMMENT] [--force]: like ssh-keygen. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "channel/keys.h"
#include "cli/cli.h"
#include "util/err.h"

int cmd_keygen(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "file", required_argument, NULL, 'f' },
		{ "comment", required_argument, NULL, 'C' },
		{ "force", no_argument, NULL, 'F' },
		{ NULL, 0, NULL, 0 },
	};
	char path[4096], comment[300], host[256] = "host", b64[KEY_B64_LEN + 1], fpr[KEY_FPR_LEN];
	const char *file = NULL, *cmt = NULL;
	struct keypair kp;
	int ch, force = 0, rc;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "f:C:", opts, NULL)) != -1) {
		if (ch == 'f')
			file = optarg;
		else if (ch == 'C')
			cmt = optarg;
		else if (ch == 'F')
			force = 1;
		else
			return EXIT_USAGE;
	}
	if (optind != argc)
		return die_msg("usage: ferry keygen [-f FILE] [-C COMMENT] [--force]"), EXIT_USAGE;
	if (file) {
		snprintf(path, sizeof path, "%s", file);
	} else if (ferry_dir_ensure() < 0 || ferry_path(path, sizeof path, "id_ferry") < 0) {
		return die_msg("%s", err_msg()), EXIT_LOCAL;
	}
	gethostname(host, sizeof host - 1);
	const char *user = getlogin();
	snprintf(comment, sizeof comment, "%s@%s", user ? user : "ferry", host);
	if (keys_generate(&kp) < 0)
		return die_msg("%s", err_msg()), EXIT_LOCAL;
	rc = keys_save(path, &kp, cmt ? cmt : comment, force);
	if (rc < 0) {
		keys_wipe(&kp);
		return die_msg("%s", err_msg()), EXIT_LOCAL;
	}
	key_to_base64(kp.pub, b64);
	key_fingerprint(kp.pub, fpr);
	keys_wipe(&kp);
	fprintf(stderr, "ferry: wrote %s (private, 0600) and %s.pub\nfingerprint %s\n"
		"Next: on the box, 'ferry pair MODULE' shows a one-time code; here, 'ferry pair HOST "
		"CODE'%s%s\n(or add the line below to the module's authorized keys file yourself)\n",
		path, path, fpr, file ? " --identity " : "", file ? path : "");
	printf("%s %s\n", b64, cmt ? cmt : comment);
	return EXIT_OK;
}
