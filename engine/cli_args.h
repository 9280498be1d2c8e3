/* Strict parsing of numeric flag values, shared by the subcommands: the whole
 * argument must be a number in range, and the error names the command and flag. */
#ifndef BB_CLI_ARGS_H
#define BB_CLI_ARGS_H

int cli_parse_double(const char *cmd, const char *flag, const char *s, double *out);
int cli_parse_long(const char *cmd, const char *flag, const char *s, long min, long *out);

#endif
