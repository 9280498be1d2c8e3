/* libFuzzer target: the packed JPEG store (.bbjpeg). Opening checks the header, the index and
 * every record's place and label; each record's crop (random-resized and evaluation, at 32x32)
 * then checks its CRC and decodes it. Any damage must end in an Error, never a crash. */
#include "../engine/data/data.h"
#include "../engine/data/jpeg_store.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_path("input.bbjpeg");
    fuzz_write(path, data, size);
    ImageSet set = {0};
    Error err = {{0}};
    if (jstore_read_set(path, &set, NULL, NULL, &err) != 0) return 0;
    uint8_t out[3 * 32 * 32];
    for (int rrc = 0; rrc < 2; rrc++) {
        const Augment aug = {32, 32, false, 0, rrc == 1, rrc == 1, 5};
        for (int i = 0; i < set.count && i < 16; i++) store_crop_one(&set, (uint32_t)i, &aug, 1, out, &err);
    }
    imageset_free(&set);
    return 0;
}
