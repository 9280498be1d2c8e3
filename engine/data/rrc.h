/* Random-resized crop's draws (rrc.c): torchvision's RandomResizedCrop.get_params, its
 * uniforms taken from Philox4x32-10 at (seed, epoch, image) instead of a stream, so an image's
 * crop in an epoch is the same at any thread, rank or loader-thread count and any batch size. */
#ifndef BB_RRC_H
#define BB_RRC_H
#include <stdbool.h>
#include <stdint.h>

typedef struct {
    int top, left, h, w; /* the crop, in the image's pixels */
    bool flip;           /* mirrored after resizing (p = 1/2) */
} CropBox;

/* scale 0.08..1 of the area, log-uniform aspect 3/4..4/3, ten attempts, then the centre crop
 * of the whole image with its aspect clamped to 3/4..4/3. */
CropBox rrc_draw(int width, int height, uint64_t seed, uint64_t epoch, uint64_t image);
/* A uniform integer in [0, n) for image's k-th extra draw (the resize-and-crop of --augment on). */
int rrc_below(uint64_t seed, uint64_t epoch, uint64_t image, uint32_t k, int n);

#endif
