/* Crops of a packed store's images (data.h: batch_store_crop). Per image: the record's bytes
 * checked against their CRC, the crop planned on the stored size (rrc.h's draw, or the resize of
 * the shorter side to out/0.875 and a crop of out, as torchvision's Resize + CenterCrop), the
 * JPEG decoded at the smallest DCT scale that keeps the crop at least out x out and only over
 * the rows and columns the filter reads, then resampled as Pillow would (resample.h) and
 * mirrored. One JPEG decoder and resampler per thread for the batch. */
#include "data.h"

#include <math.h>
#include <stdlib.h>

#include "jpeg_io.h"
#include "jpeg_store.h"
#include "resample.h"
#include "rrc.h"

typedef struct {
    JpegDecoder *dec;
    Resampler rs;
} CropWorker;

/* One axis of the plan in the stored image's pixels, before DCT scaling: the source box
 * [in0, in1) of an image of `size` resized to out_full, out_count outputs from out_first. */
typedef struct {
    int size;
    double in0, in1;
    int out_full, out_first, out_count;
    bool clip_to_box; /* rrc crops first (taps end at the box), a resize clips at the image */
} AxisPlan;

/* torchvision's Resize(s) of the shorter side: the longer is int(s * long / short). */
static int resized_long(int s, int shorter, int longer) { return (int)((double)s * longer / shorter); }

static void plan_resize_crop(int W, int H, const Augment *aug, uint64_t epoch, uint32_t rec, AxisPlan *px, AxisPlan *py,
                             bool *flip)
{
    const int s = (int)(aug->out_h / 0.875); /* 224 -> 256 */
    const int nw = W <= H ? s : resized_long(s, H, W), nh = H < W ? s : resized_long(s, W, H);
    int top = (int)nearbyint((nh - aug->out_h) / 2.0), left = (int)nearbyint((nw - aug->out_w) / 2.0);
    if (aug->random_crop) {
        top = rrc_below(aug->seed, epoch, rec, 0, nh - aug->out_h + 1);
        left = rrc_below(aug->seed, epoch, rec, 1, nw - aug->out_w + 1);
    }
    *px = (AxisPlan){W, 0, W, nw, left, aug->out_w, false};
    *py = (AxisPlan){H, 0, H, nh, top, aug->out_h, false};
    *flip = aug->flip && rrc_below(aug->seed, epoch, rec, 2, 2) == 1;
}

static void plan_rrc(int W, int H, const Augment *aug, uint64_t epoch, uint32_t rec, AxisPlan *px, AxisPlan *py,
                     bool *flip)
{
    const CropBox b = rrc_draw(W, H, aug->seed, epoch, rec);
    *px = (AxisPlan){W, b.left, b.left + b.w, aug->out_w, 0, aug->out_w, true};
    *py = (AxisPlan){H, b.top, b.top + b.h, aug->out_h, 0, aug->out_h, true};
    *flip = aug->flip && b.flip;
}

/* The plan on the image decoded at eighths/8 (scaled size `scaled`): the resampler's axis and
 * the source pixels [*lo, *hi) it reads. */
static ResampleAxis scaled_axis(const AxisPlan *p, int scaled, int *lo, int *hi)
{
    const double f = (double)scaled / p->size;
    ResampleAxis a;
    if (p->clip_to_box) { /* the crop is the resampler's whole image */
        int b0 = (int)floor(p->in0 * f), b1 = (int)ceil(p->in1 * f);
        if (b1 > scaled) b1 = scaled;
        if (b1 <= b0) b1 = b0 + 1;
        a = (ResampleAxis){b1 - b0, 0.0f, (float)(b1 - b0), 0, p->out_full, p->out_first, p->out_count};
        resample_span(&a, lo, hi);
        *lo += b0, *hi += b0;
        a.origin = -b0; /* src will address the decoded pixel *lo; the box starts at b0 */
        return a;
    }
    a = (ResampleAxis){scaled, (float)(p->in0 * f), (float)(p->in1 * f), 0, p->out_full, p->out_first, p->out_count};
    resample_span(&a, lo, hi);
    return a;
}

static int crop_one(CropWorker *wk, const ImageSet *set, uint32_t i, const Augment *aug, uint64_t epoch, uint8_t *out,
                    Error *err)
{
    const JpegStore *st = set->store;
    const uint32_t rec = set->records ? set->records[i] : i;
    JStoreRecord r;
    const uint8_t *bytes = jstore_bytes(st, rec, &r, err);
    if (!bytes) return -1;
    AxisPlan px, py;
    bool flip;
    if (aug->rrc)
        plan_rrc(r.w, r.h, aug, epoch, rec, &px, &py, &flip);
    else
        plan_resize_crop(r.w, r.h, aug, epoch, rec, &px, &py, &flip);
    /* decode at 1/2, 1/4 or 1/8 when the source box is that many times the output */
    const int m = jpeg_scale_for((int)ceil((px.in1 - px.in0) * px.out_count / px.out_full),
                                 (int)ceil((py.in1 - py.in0) * py.out_count / py.out_full), px.out_count, py.out_count);
    const int sw = (r.w * m + 7) / 8, sh = (r.h * m + 7) / 8;
    int x0, x1, y0, y1;
    ResampleAxis ax = scaled_axis(&px, sw, &x0, &x1), ay = scaled_axis(&py, sh, &y0, &y1);
    char name[600];
    snprintf(name, sizeof name, "%s: record %u", st->path, rec);
    /* libjpeg's upsampled chroma at a region's edge lacks its neighbours and differs from a
     * full decode: a margin of one iMCU (16 pixels) keeps those pixels out of the filter's reach */
    const int dx0 = x0 - 16 > 0 ? x0 - 16 : 0, dy0 = y0 - 16 > 0 ? y0 - 16 : 0;
    const int dx1 = x1 + 16 < sw ? x1 + 16 : sw, dy1 = y1 + 16 < sh ? y1 + 16 : sh;
    JpegImage img;
    const JpegRegion want = {m, dx0, dy0, dx1 - dx0, dy1 - dy0};
    if (jpeg_decode(wk->dec, bytes, r.size, name, &want, &img, err) != 0) return -1;
    if (img.full_w != sw || img.full_h != sh) {
        error_set(err, "%s: %dx%d pixels, the index says %ux%u", name, img.full_w * 8 / m, img.full_h * 8 / m, r.w, r.h);
        return -1;
    }
    /* src addresses decoded pixel (x0, y0): the axes' origins say which source pixel that is */
    ax.origin += x0, ay.origin += y0;
    const uint8_t *src = img.rgb + (size_t)(y0 - img.y0) * img.stride + (size_t)(x0 - img.x0) * 3;
    resample_rgb(&wk->rs, src, img.stride, &ax, &ay, flip, true, out);
    return 0;
}

int store_crop_one(const ImageSet *set, uint32_t i, const Augment *aug, uint64_t epoch, uint8_t *out, Error *err)
{
    CropWorker wk = {jpeg_decoder_new(), {0}};
    int rc = crop_one(&wk, set, i, aug, epoch, out, err);
    jpeg_decoder_free(wk.dec);
    resampler_free(&wk.rs);
    return rc;
}

void batch_store_crop(const ImageSet *set, const uint32_t *idx, int n, const Augment *aug, uint64_t epoch,
                      uint8_t *out, int32_t *labels, int threads)
{
    const Augment whole = {set->h, set->w, false, 0, false, false, 0};
    if (!aug || aug->out_h <= 0) aug = &whole;
    const size_t bytes = 3 * (size_t)aug->out_h * (size_t)aug->out_w;
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
        CropWorker wk = {jpeg_decoder_new(), {0}};
#pragma omp for schedule(dynamic, 1)
        for (int k = 0; k < n; k++) {
            Error err;
            if (labels) labels[k] = set->labels[idx[k]];
            if (crop_one(&wk, set, idx[k], aug, epoch, out + (size_t)k * bytes, &err) != 0) {
                fprintf(stderr, "bigbatch: %s\n", err.msg);
                exit(1);
            }
        }
        jpeg_decoder_free(wk.dec);
        resampler_free(&wk.rs);
    }
}
