/* A run's identity: the canonical form of its settings and the id hashed from it. Shared by
 * the experiment files (a sweep's runs) and `train --db` (a run by hand), so that the same
 * settings get the same id either way (results/SCHEMA.md, runs.id). */
#ifndef BB_RUN_CONFIG_H
#define BB_RUN_CONFIG_H
#include <stdbool.h>
#include <stdint.h>

#include "../engine/base/util.h"

uint64_t fnv1a64(const char *s);
/* 16 hex digits of FNV-1a 64 of the canonical config JSON. */
void run_config_id(const char *config_json, char id[17]);
/* A plain decimal number (no hex, inf or nan, which strtod would also take). */
bool run_config_number(const char *s, double *out);
/* The value as the config stores it: numbers one way (0.10 = 0.1 = 1e-1, as %.10g), plain
 * integers with every digit (a long seed), anything else as is. Caller frees. */
char *run_config_value(const char *s);
/* Flags that change how a run executes or where it reports, not what it computes: left
 * out of the config, so they do not change the id. */
bool run_config_is_execution_detail(const char *flag);
/* Canonical JSON of train flags given as argv (argv[0] skipped; --name value, --name=value,
 * --name): sorted by name, values normalized, execution details left out. Caller frees. */
char *run_config_from_argv(int argc, char **argv, Error *err);
/* The command line as one string ("prefix argv..."; arguments with spaces quoted). */
char *run_config_command(const char *prefix, int argc, char *const *argv);

#endif
