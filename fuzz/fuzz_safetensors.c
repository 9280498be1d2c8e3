/* libFuzzer target: checkpoint loading (the safetensors header length and JSON, every
 * tensor's dtype, shape and offsets, the metadata) into a LeNet with an SGD optimizer. */
#include "../engine/train/checkpoint.h"
#include "../engine/net/models.h"
#include "../engine/optim/optimizer.h"
#include "fuzz_input.h"

static Backend *bk;
static Net *net;
static Optimizer *opt;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    Error err = {{0}};
    bk = backend_create(1);
    net = model_build("lenet", bk, 0, 1, &err);
    OptConfig cfg;
    opt_config_defaults(&cfg);
    cfg.momentum = 0.9;
    opt = net ? optimizer_create(&cfg, net, &err) : NULL;
    if (!opt) {
        fprintf(stderr, "fuzz_safetensors: %s\n", err.msg);
        abort();
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_path("input.safetensors");
    fuzz_write(path, data, size);
    TrainPosition pos;
    Error err = {{0}};
    checkpoint_load(path, net, opt, &pos, &err);
    return 0;
}
