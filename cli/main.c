/* bin/bigbatch: dispatches `bigbatch <command>` to the module that owns it. */
#include <stdio.h>
#include <string.h>

#include "../engine/backend.h"
#include "../engine/blas_core.h"
#include "../engine/version.h"
#include "cli.h"

static void usage(FILE *f)
{
    fprintf(f,
            "bigbatch %s: large-batch training experiments (LARS, LARC) on the CPU\n"
            "\n"
            "usage: bigbatch <command> [options]\n"
            "\n"
            "commands:\n"
            "  train     train one model from flags (bigbatch train --help)\n"
            "  models    list the models with parameter counts and GFLOPs per image\n"
            "  sweep     run an experiment file's grid into a results database (bigbatch sweep --help)\n"
            "  report    the paper-style table of an experiment from its database\n"
            "  plot      draw an experiment's figures from its database with gnuplot (bigbatch plot --help)\n"
            "  runs      list the runs in a results database and their status\n"
            "  merge     combine results databases of separate sweeps into one\n"
            "  bench     training throughput of one model, or the sgemm rate (bigbatch bench --help)\n"
            "  scale     predicted time to train on N nodes; --papers checks it on published runs\n"
            "  compare   the largest difference between the weights of two checkpoints\n"
            "  version   print the engine version\n",
            bigbatch_version());
}

int main(int argc, char **argv)
{
    blas_core_ensure(argv); /* before any work: it may re-execute the program */
    if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "train")) return cli_train(argc - 1, argv + 1);
    if (!strcmp(cmd, "models")) return cli_models(argc - 1, argv + 1);
    if (!strcmp(cmd, "bench")) return cli_bench(argc - 1, argv + 1);
    if (!strcmp(cmd, "scale")) return cli_scale(argc - 1, argv + 1);
    if (!strcmp(cmd, "compare")) return cli_compare(argc - 1, argv + 1);
    if (!strcmp(cmd, "sweep")) return cli_sweep(argc - 1, argv + 1);
    if (!strcmp(cmd, "report")) return cli_report(argc - 1, argv + 1);
    if (!strcmp(cmd, "runs")) return cli_runs(argc - 1, argv + 1);
    if (!strcmp(cmd, "merge")) return cli_merge(argc - 1, argv + 1);
    if (!strcmp(cmd, "plot")) return cli_plot(argc - 1, argv + 1);
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
#ifdef BB_NO_MPI
        const char *mpi = "without MPI";
#else
        const char *mpi = "MPI";
#endif
        printf("bigbatch %s (%s, %s, OpenBLAS kernels %s, backend %s; devices: %s)\n", bigbatch_version(), REAL_NAME,
               mpi, blas_core_name(), backend_name(NULL), backend_devices());
        return 0;
    }
    fprintf(stderr, "bigbatch: unknown command '%s'\n\n", cmd);
    usage(stderr);
    return 2;
}
