/* The augmentation training gives a set for a network's input (data.h: augment_for_training),
 * chosen once for `train` and for `bench --loader`, which measures training's input. */
#include "data.h"

/* The random crop's padding for images of the input's own size: CIFAR's 4 pixels for inputs of
 * 32 to 63, an eighth of the side otherwise (as the 4 of 32). */
static int crop_padding(int in_h) { return in_h >= 32 && in_h < 64 ? 4 : in_h / 8; }

int augment_for_training(const ImageSet *set, const char *model, const char *source, int c, int h, int w,
                         bool rrc, uint64_t seed, Augment *aug, Error *err)
{
    if (set->c != c || set->h < h || set->w < w) {
        const char *hint = set->c != c ? ""
                           : set->store ? " (bigbatch data pack --max-side stores them larger)"
                                        : " (--image-size stores image folders larger)";
        error_set(err, "model %s expects %dx%dx%d images but %s has %dx%dx%d%s", model, c, h, w, source, set->c,
                  set->h, set->w, hint);
        return -1;
    }
    if (rrc && !set->store) {
        error_set(err, "--augment rrc needs a packed store (bigbatch data pack; README: Data), not %s's %s", source,
                  set->map ? "decoded cache" : "pixels");
        return -1;
    }
    /* a store is decoded and resized; larger stored images (ImageNet at 256 for a 227 input)
     * are cropped within; images of the input's size are padded, then cropped back */
    const bool larger = set->h > h || set->w > w;
    const int pad = set->store || larger ? 0 : crop_padding(h);
    *aug = (Augment){h, w, true, pad, true, rrc, seed};
    return 0;
}
