/* SPDX-License-Identifier: MIT */
#include <stdio.h>
int main(void)
{
	puts("ferry " FERRY_VERSION);
	return 0;
}
