/* bin/bigbatch: dispatches `bigbatch <command>` to the module that owns it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/backend.h"
#include "../engine/blas_core.h"
#include "../engine/base/fault.h"
#include "../engine/base/name_table.h"
#include "../engine/optim/optimizer.h"
#include "../sweeps/flags/train_flags.h"
#include "../engine/base/version.h"
#include "../sweeps/store.h"
#include "cli.h"

static int cli_version(int argc, char **argv)
{
    (void)argc, (void)argv;
#ifdef BB_NO_MPI
    const char *mpi = "without MPI";
#else
    const char *mpi = "MPI";
#endif
    printf("bigbatch %s (%s, %s, OpenBLAS kernels %s, backend %s; devices: %s)\n", bigbatch_version(), REAL_NAME, mpi,
           blas_core_name(), backend_name(NULL), backend_devices());
    return 0;
}

/* Every command: its name, its front end, and its line in the usage. */
static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *help;
} COMMANDS[] = {
    {"train", cli_train, "train one model from flags (bigbatch train --help)"},
    {"data", cli_data, "pack an image folder into JPEG stores, check or benchmark them (bigbatch data --help)"},
    {"models", cli_models, "list the models with parameter counts and GFLOPs per image"},
    {"sweep", cli_sweep, "run an experiment file's grid into a results database (bigbatch sweep --help)"},
    {"report", cli_report, "the paper-style table of an experiment from its database; --all: the docs/ pages"},
    {"plot", cli_plot, "draw an experiment's figures from its database with gnuplot (bigbatch plot --help)"},
    {"runs", cli_runs, "list the runs in a results database and their status"},
    {"merge", cli_merge, "combine results databases of separate sweeps into one"},
    {"bench", cli_bench, "training throughput of one model, or the sgemm rate (bigbatch bench --help)"},
    {"scale", cli_scale, "predicted time to train on N nodes; --papers checks it on published runs"},
    {"compare", cli_compare, "the largest difference between the weights of two checkpoints"},
    {"fingerprint", cli_fingerprint, "the numerics fingerprint: a short fixed run's checkpoint hash"},
    {"verify", cli_verify, "re-run cells of an archived experiment and check them against its spread"},
    {"version", cli_version, "print the engine version"},
};
enum { N_COMMANDS = (int)(sizeof COMMANDS / sizeof COMMANDS[0]) };
static const NameTable COMMAND_NAMES = NAME_TABLE(COMMANDS);

static void usage(FILE *f)
{
    fprintf(f, "bigbatch %s: large-batch training experiments (LARS, LARC) on the CPU\n\nusage: bigbatch <command> "
               "[options]\n\ncommands:\n",
            bigbatch_version());
    for (int i = 0; i < N_COMMANDS; i++) fprintf(f, "  %-11s %s\n", COMMANDS[i].name, COMMANDS[i].help);
}

static void commands_markdown(FILE *f)
{
    fputs("| command | what it does |\n|---|---|\n", f);
    for (int i = 0; i < N_COMMANDS; i++) fprintf(f, "| `%s` | %s |\n", COMMANDS[i].name, COMMANDS[i].help);
}

/* `bigbatch help --markdown TOPIC`: the tables the docs hold between generated markers,
 * printed from the tables the program runs on, so the docs cannot drift (docs/regenerate.sh). */
static const struct {
    const char *topic;
    void (*print)(FILE *f);
} MARKDOWN[] = {
    {"commands", commands_markdown},
    {"train", train_flags_markdown},
    {"sweep", sweep_flags_markdown},
    {"plot", plot_flags_markdown},
    {"bench", bench_flags_markdown},
    {"bench-allreduce", allreduce_flags_markdown},
    {"scale", scale_flags_markdown},
    {"compare", compare_flags_markdown},
    {"verify", verify_flags_markdown},
    {"runs", runs_flags_markdown},
    {"report", report_flags_markdown},
    {"report-all", report_all_flags_markdown},
    {"merge", merge_flags_markdown},
    {"fingerprint", fingerprint_flags_markdown},
    {"data", data_flags_markdown},
    {"presets", optimizer_presets_markdown},
};

static int help_markdown(const char *topic)
{
    for (size_t i = 0; i < sizeof MARKDOWN / sizeof MARKDOWN[0]; i++)
        if (topic && !strcmp(topic, MARKDOWN[i].topic)) {
            MARKDOWN[i].print(stdout);
            return 0;
        }
    fprintf(stderr, "bigbatch help --markdown: '%s' is not one of", topic ? topic : "");
    for (size_t i = 0; i < sizeof MARKDOWN / sizeof MARKDOWN[0]; i++) fprintf(stderr, " %s", MARKDOWN[i].topic);
    fputc('\n', stderr);
    return 2;
}

int main(int argc, char **argv)
{
    blas_core_ensure(argv); /* before any work: it may re-execute the program */
    Error err = {{0}};
    /* the test hook (engine/base/fault.h), read once here, before SQLite starts */
    if (fault_init(getenv("BIGBATCH_FAULT"), &err) || store_faults_install(&err)) {
        fprintf(stderr, "bigbatch: %s\n", err.msg);
        return 2;
    }
    if (argc >= 3 && !strcmp(argv[1], "help") && !strcmp(argv[2], "--markdown")) return help_markdown(argv[3]);
    if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *cmd = !strcmp(argv[1], "--version") ? "version" : argv[1];
    int i = name_table_index(COMMAND_NAMES, cmd);
    if (i >= 0) return COMMANDS[i].run(argc - 1, argv + 1);
    fprintf(stderr, "bigbatch: unknown command '%s'\n\n", cmd);
    usage(stderr);
    return 2;
}
