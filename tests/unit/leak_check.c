// SPDX-License-Identifier: MIT
/*
 * LeakSanitizer for the unit tests. The kselftest harness ends each
 * test's child process with _exit(), which skips the leak scan ASan runs
 * at exit: a leak in a test went unreported. The test programs built
 * under ASan are linked with -Wl,--wrap=_exit, so every _exit() in them
 * (the harness's included) runs the scan first; a leak makes a
 * successful exit status 23, which the harness reports as a failed test,
 * with LSan's report above it.
 */
#include <sanitizer/lsan_interface.h>

void __real__exit(int status) __attribute__((noreturn));
void __wrap__exit(int status) __attribute__((noreturn));

void __wrap__exit(int status)
{
	if (__lsan_do_recoverable_leak_check() && status == 0)
		status = 23;
	__real__exit(status);
}
