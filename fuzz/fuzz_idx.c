/* libFuzzer target: the IDX readers (gzip or raw; header, dimensions, payload, gzip trailer). */
#include "../engine/data/data.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_path("input.idx");
    fuzz_write(path, data, size);
    ImageSet set = {0};
    Error err = {{0}};
    if (idx_read_images(path, &set, &err) == 0) imageset_free(&set);
    set = (ImageSet){0};
    if (idx_read_labels(path, &set, &err) == 0) imageset_free(&set);
    return 0;
}
