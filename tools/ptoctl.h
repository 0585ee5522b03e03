/* SPDX-License-Identifier: MIT */
/* What ptoctl's command files share: the command table's entry, number
 * and option parsing, opening a device (ptoctl.c). A new command is a
 * function here and a line in ptoctl.c's cmds[]. */
#ifndef PTOCTL_H
#define PTOCTL_H

#include <stdint.h>
#include <pto/pto.h>

struct ptoctl_cmd {
	const char *name;
	const char *usage;
	const char *what;	/* one line for the usage text */
	int (*fn)(int argc, char **argv);
};

/* An unsigned 32-bit decimal from the start of @s (no sign, no blank,
 * at most UINT32_MAX); *end as strtoul's. 0 or -EINVAL. */
int ptoctl_parse_u32(const char *s, char **end, uint32_t *out);
/* A subcommand's option mistake, named "ptoctl CMD: ..." (argv[0] is
 * the subcommand). */
void ptoctl_bad_option(char **argv, int c);
/* Open /dev/pto<index>; says why on failure. */
int ptoctl_open_index(unsigned int index, struct pto_dev **dev);
/* -d N, open /dev/ptoN and read its topology; says why on failure. */
int ptoctl_open_device(int argc, char **argv, struct pto_dev **dev,
		       struct pto_dev_info *info);

/* The commands: ARGS with argv[0] the command's name; 0 or -errno. */
int ptoctl_info(int argc, char **argv);		/* ptoctl_dev.c */
int ptoctl_cores(int argc, char **argv);
int ptoctl_gates(int argc, char **argv);
#define PTOCTL_EXEC_USAGE "exec [-d N] [--core C] --func NAME [--dtype f32|i32] [--shape DxD..] [--n N] [--a V,..] [--b V,..] [--scalar S] [--ns NS]"
int ptoctl_exec(int argc, char **argv);		/* ptoctl_exec.c */
#define PTOCTL_MONITOR_USAGE "monitor [-d N] [-n COUNT] [-t MS]"
int ptoctl_monitor(int argc, char **argv);	/* ptoctl_monitor.c */
int ptoctl_lanes(int argc, char **argv);	/* ptoctl_lanes.c */

#endif /* PTOCTL_H */
