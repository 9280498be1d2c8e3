/* libFuzzer target: the JPEG folder decoder (libjpeg-turbo through imagefolder.c: header
 * checks, colour spaces, CMYK, warnings as errors), with and without scaling on decoding. */
#include <sys/stat.h>

#include "../engine/data/imagefolder.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char root[512];
    if (!root[0]) {
        snprintf(root, sizeof root, "%s", fuzz_path("folder"));
        char cls[600];
        snprintf(cls, sizeof cls, "%s/k", root);
        if ((mkdir(root, 0755) && access(root, F_OK)) || (mkdir(cls, 0755) && access(cls, F_OK))) abort();
    }
    char file[600];
    snprintf(file, sizeof file, "%s/k/a.jpg", root);
    fuzz_write(file, data, size);
    for (int image_size = 0; image_size <= 16; image_size += 16) {
        FolderOptions opt = {.max_classes = 4, .image_size = image_size};
        ImageSet set = {0};
        Error err = {{0}};
        if (imagefolder_read(root, &opt, &set, NULL, NULL, &err) == 0) imageset_free(&set);
    }
    return 0;
}
