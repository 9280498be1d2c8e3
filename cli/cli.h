/* Subcommands of bin/bigbatch, one front end each in cli/. Each returns the process exit
 * status. */
#ifndef BB_CLI_H
#define BB_CLI_H
#include <stdio.h>

int cli_models(int argc, char **argv);
int cli_train(int argc, char **argv);
int cli_bench(int argc, char **argv);
/* cli_data.c: the packed JPEG store */
int cli_data(int argc, char **argv);
/* bench --allreduce (bench_allreduce.c) */
int bench_allreduce(int argc, char **argv);
int cli_scale(int argc, char **argv);
int cli_compare(int argc, char **argv);
/* cli_sweep.c */
int cli_sweep(int argc, char **argv);
int cli_runs(int argc, char **argv);
int cli_report(int argc, char **argv);
/* cli_merge.c */
int cli_merge(int argc, char **argv);
/* cli_fingerprint.c */
int cli_fingerprint(int argc, char **argv);
/* cli_verify.c */
int cli_verify(int argc, char **argv);
/* cli_plot.c */
int cli_plot(int argc, char **argv);

/* Each command's flags from its one table (sweeps/flags/flag_table.h): its --help, and the
 * Markdown of docs/cli.md (bigbatch help --markdown COMMAND). */
void bench_flags_usage(FILE *out);
void bench_flags_markdown(FILE *out);
void sweep_flags_usage(FILE *out);
void sweep_flags_markdown(FILE *out);
void scale_flags_usage(FILE *out);
void scale_flags_markdown(FILE *out);
void plot_flags_markdown(FILE *out);
void compare_flags_markdown(FILE *out);
void verify_flags_markdown(FILE *out);
void runs_flags_markdown(FILE *out);
void report_flags_markdown(FILE *out);
void report_all_flags_markdown(FILE *out);
void fingerprint_flags_markdown(FILE *out);
void merge_flags_markdown(FILE *out);
void data_flags_markdown(FILE *out);
void allreduce_flags_usage(FILE *out);
void allreduce_flags_markdown(FILE *out);

#endif
