// SPDX-License-Identifier: MIT
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <pto/pto.h>

/* libpto's own meanings first, then the C library's text for the errno. */
const char *pto_strerror(int err)
{
	/* In a long: INT_MIN has no int negation. */
	long e = err < 0 ? -(long)err : err;

	switch (e) {
	case 0:
		return "success";
	case EPROTO:
		return "driver ABI version mismatch or protocol error";
	case ENOTTY:
		return "not a pto device or unsupported ioctl";
	case EXDEV:
		return "a GM tensor of another device (its buffer was allocated "
		       "on another /dev/ptoN)";
	case E2BIG:
		return "too large (a heap ring or payload request), or a struct "
		       "from a newer libpto with non-zero unknown fields";
	case EOPNOTSUPP:
		return "not supported (args dump on a device without dump "
		       "lanes, or a graph launch while a dump lane is bound "
		       "but not named for it)";
	default:
		return e > INT_MAX ? "unknown error" : strerror((int)e);
	}
}
