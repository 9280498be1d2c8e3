/* `bigbatch models`: every model with its input, parameter count and cost. */
#include <stdio.h>
#include <string.h>

#include "../engine/net/models.h"
#include "cli.h"

int cli_models(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: bigbatch models\n  Lists every model: input shape, classes, parameters,\n"
               "  forward GFLOPs per image (conv and fc layers; a multiply-add counts as 2 FLOPs).\n");
        return 0;
    }
    Backend *bk = backend_create(1);
    int n;
    const ModelInfo *m = model_list(&n);
    printf("%-17s %-11s %7s %13s %10s %10s  %s\n", "model", "input", "classes", "parameters",
           "GMACs/img", "GFLOPs/img", "description");
    for (int i = 0; i < n; i++) {
        Error err;
        Net *net = model_build_shapes(m[i].name, bk, 0, &err);
        if (!net) {
            fprintf(stderr, "bigbatch models: %s\n", err.msg);
            backend_destroy(bk);
            return 1;
        }
        char input[24];
        snprintf(input, sizeof input, "%dx%dx%d", m[i].in_c, m[i].in_h, m[i].in_w);
        char params[32];
        /* thousands separators make the published counts easy to compare */
        char raw[32];
        snprintf(raw, sizeof raw, "%zu", net->n_weights);
        int len = (int)strlen(raw), o = 0;
        for (int j = 0; j < len; j++) {
            params[o++] = raw[j];
            if ((len - j - 1) % 3 == 0 && j + 1 < len) params[o++] = ',';
        }
        params[o] = 0;
        double f = net_flops_per_image(net);
        printf("%-17s %-11s %7d %13s %10.4f %10.4f  %s\n", m[i].name, input, m[i].classes, params,
               f / 2e9, f / 1e9, m[i].summary);
        net_destroy(net);
    }
    printf("\nFLOPs count convolution and fully connected layers, a multiply-add as 2 FLOPs.\n");
    backend_destroy(bk);
    return 0;
}
