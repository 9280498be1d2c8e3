/* libFuzzer target: the decoded-image cache (.bbimg): its header, class names and labels are
 * checked before the file is mapped and used; the image folder beside it does not exist, so
 * an invalid cache ends in an error. */
#include "../engine/data/imagefolder.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *cache = fuzz_path("input.bbimg");
    fuzz_write(cache, data, size);
    char names[64][32];
    int classes = 0;
    for (int image_size = 0; image_size <= 32; image_size += 32) {
        FolderOptions opt = {.cache_path = cache, .max_classes = 64, .image_size = image_size};
        ImageSet set = {0};
        Error err = {{0}};
        if (imagefolder_read("/nonexistent-bigbatch-fuzz-folder", &opt, &set, names, &classes, &err) == 0)
            imageset_free(&set);
    }
    return 0;
}
