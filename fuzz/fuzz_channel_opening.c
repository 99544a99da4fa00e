/* SPDX-License-Identifier: MIT */
/* Opening lines: the byte-by-byte accumulator, then both parsers. */
#include <stddef.h>
#include <stdint.h>

#include "channel/opening.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char line[OPENING_MAX + 1];
	size_t len = 0;
	unsigned offered;
	enum cipher_id chosen;
	int rc = 0;

	for (size_t i = 0; i < size && rc == 0; i++)
		rc = opening_feed(line, &len, (char)data[i]);
	if (rc != 1)
		return 0;
	if (opening_parse_client(line, len, &offered) == 0)
		(void)opening_choose(offered, CIPHER_MASK_ALL, data[0] & 1);
	(void)opening_parse_server(line, len, CIPHER_MASK_ALL, &chosen);
	return 0;
}
