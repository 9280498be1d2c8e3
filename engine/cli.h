/* Subcommands of bin/bigbatch. Each returns the process exit status. */
#ifndef BB_CLI_H
#define BB_CLI_H

int cli_models(int argc, char **argv);
int cli_train(int argc, char **argv);
int cli_bench(int argc, char **argv);

#endif
