/* `bigbatch data`: the packed JPEG store. pack writes one from an image folder; check reads
 * every record back; crop writes one image's training or evaluation crop (a PPM); rrc prints
 * random-resized-crop draws; bench measures decoded and cropped images a second. The tests
 * compare crop and rrc with torchvision's definitions (tests/rrc_reference.py). */
#include <limits.h>
#include <omp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../engine/data/data.h"
#include "../engine/data/jpeg_store.h"
#include "../engine/data/pack.h"
#include "../engine/data/rrc.h"
#include "../sweeps/flags/flag_table.h"
#include "cli.h"

#define USAGE_TEXT \
    "usage: bigbatch data pack --data-root DIR --out DIR [--max-side N] [--quality Q] [--threads N] [--quiet]\n" \
    "         packs DIR/train and DIR/val (or test) into OUT/train.bbjpeg and OUT/val.bbjpeg: every image\n" \
    "         re-encoded once with its shorter side at most N [256] (JPEG quality Q [90]); train with\n" \
    "         --data imagefolder --data-root OUT\n" \
    "       bigbatch data check FILE            reads every record back (checksums, JPEG decodes)\n" \
    "       bigbatch data crop --store FILE --record K --out FILE.ppm [--size N] [--augment rrc|on|off]\n" \
    "                                          [--seed S] [--epoch E]   one image as training sees it\n" \
    "       bigbatch data rrc --width W --height H --count N [--seed S] [--epoch E]\n" \
    "                                          random-resized-crop draws: top left h w flip, one a line\n" \
    "       bigbatch data bench --store FILE [--threads N] [--images N] [--size N] [--augment rrc|on|off]\n" \
    "                                          decoded and cropped img/s on one thread and on N, and\n" \
    "                                          img/CPU-second on N (bench/loader_compare.py: beside torchvision)\n"

static const char USAGE[] = USAGE_TEXT;

/* The flags of every subcommand (each reads its own); unknown flags are errors naming them. */
typedef struct {
    const char *data_root, *out, *store, *augment;
    long max_side, quality, threads, record, size, seed, epoch, width, height, count, images;
    bool quiet;
} DataArgs;

static void data_defaults(void *target)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    *(DataArgs *)target = (DataArgs){.max_side = PACK_DEFAULT_MAX_SIDE, .quality = PACK_DEFAULT_QUALITY,
                                     .threads = cpus > 0 ? cpus : 1, .seed = 1};
}

#define AT(member) offsetof(DataArgs, member)
#define COUNT(member) F_LONG(AT(member), 0, LONG_MAX)

static const Flag FLAGS[] = {
    {"data-root", "DIR", "pack: the image folder (DIR/train, DIR/val or test)", NULL, F_STR(AT(data_root))},
    {"out", "DIR", "pack: the stores' folder; crop: the PPM file", NULL, F_STR(AT(out))},
    {"store", "FILE", "crop, bench: a packed store", NULL, F_STR(AT(store))},
    {"augment", "A", "crop, bench: rrc, on or off [rrc]", NULL, F_STR(AT(augment))},
    {"max-side", "N", "pack: the shorter side's most", "%ld", COUNT(max_side)},
    {"quality", "Q", "pack: the JPEG quality", "%ld", COUNT(quality)},
    {"threads", "N", "pack, bench: threads", "%ld: the number of CPUs", .dflt_doc = "the number of CPUs", COUNT(threads)},
    {"record", "K", "crop: the record", NULL, COUNT(record)},
    {"size", "N", "crop, bench: the crop's side", NULL, COUNT(size)},
    {"seed", "S", "crop, rrc: the seed of the draws", "%ld", COUNT(seed)},
    {"epoch", "E", "crop, rrc: the epoch of the draws", "%ld", COUNT(epoch)},
    {"width", "W", "rrc: the image's width", NULL, COUNT(width)},
    {"height", "H", "rrc: the image's height", NULL, COUNT(height)},
    {"count", "N", "rrc: the draws", NULL, COUNT(count)},
    {"images", "N", "bench: the images decoded", NULL, COUNT(images)},
    {"quiet", NULL, "pack: no progress lines", NULL, F_SWITCH(AT(quiet))},
    FLAG_HELP_ROW,
};

static const FlagTable TABLE = {"data", FLAGS, FLAG_COUNT(FLAGS), sizeof(DataArgs), data_defaults,
                                USAGE_TEXT "\noptions (each subcommand reads its own):\n", NULL, 0,
                                "%s: unknown flag", "%s: needs a value", NULL, 0, 0};

void data_flags_markdown(FILE *out) { flag_table_markdown(&TABLE, out); }

/* The flags after the subcommand: 0, 1 for --help, -1 after saying what is wrong. */
static int parse(int argc, char **argv, DataArgs *a)
{
    Error err = {{0}};
    int rest;
    int rc = flag_table_parse(&TABLE, argc - 1, argv + 1, a, &rest, &err);
    if (rc < 0) fprintf(stderr, "bigbatch data: %s\n%s", err.msg, USAGE);
    return rc;
}

static int data_pack(const DataArgs *a)
{
    if (!a->data_root || !a->out) {
        fprintf(stderr, "bigbatch data pack: needs --data-root and --out\n%s", USAGE);
        return 2;
    }
    PackOptions opt = {(int)a->max_side, (int)a->quality, (int)a->threads, a->quiet};
    Error err;
    if (pack_folder(a->data_root, a->out, &opt, &err) != 0) {
        fprintf(stderr, "bigbatch data pack: %s\n", err.msg);
        return 1;
    }
    return 0;
}

static int data_check(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "bigbatch data check: needs a store\n%s", USAGE);
        return 2;
    }
    ImageSet set;
    Error err;
    if (jstore_read_set(argv[2], &set, NULL, NULL, &err) != 0) {
        fprintf(stderr, "bigbatch data check: %s\n", err.msg);
        return 1;
    }
    const Augment aug = {32, 32, false, 0, false, false, 0};
    uint8_t out[3 * 32 * 32];
    int rc = 0;
    for (uint32_t i = 0; i < (uint32_t)set.count && rc == 0; i++)
        if (store_crop_one(&set, i, &aug, 0, out, &err) != 0) {
            fprintf(stderr, "bigbatch data check: %s\n", err.msg);
            rc = 1;
        }
    if (rc == 0) printf("%s: %d records, %u classes, shorter side <= %u: all read back\n", argv[2], set.count,
                        set.store->classes, set.store->max_side);
    imageset_free(&set);
    return rc;
}

static int augment_of(const char *name, const DataArgs *a, Augment *aug)
{
    const int size = a->size ? (int)a->size : 224;
    const char *n = name ? name : "rrc";
    if (strcmp(n, "rrc") && strcmp(n, "on") && strcmp(n, "off")) {
        fprintf(stderr, "bigbatch data: --augment: '%s' is not rrc, on or off\n", n);
        return -1;
    }
    *aug = (Augment){size, size, !strcmp(n, "on"), 0, strcmp(n, "off") != 0, !strcmp(n, "rrc"), (uint64_t)a->seed};
    return 0;
}

static int write_ppm(const char *path, const uint8_t *chw, int h, int w)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    fprintf(f, "P6\n%d %d\n255\n", w, h);
    const size_t plane = (size_t)h * w;
    for (size_t p = 0; p < plane; p++)
        for (int c = 0; c < 3; c++) fputc(chw[c * plane + p], f);
    return fclose(f);
}

static int data_crop(const DataArgs *a)
{
    Augment aug;
    if (!a->store || !a->out || augment_of(a->augment, a, &aug) != 0) {
        if (!a->store || !a->out) fprintf(stderr, "bigbatch data crop: needs --store and --out\n%s", USAGE);
        return 2;
    }
    ImageSet set;
    Error err;
    if (jstore_read_set(a->store, &set, NULL, NULL, &err) != 0) {
        fprintf(stderr, "bigbatch data crop: %s\n", err.msg);
        return 1;
    }
    int rc = 0;
    uint8_t *out = xmalloc(3 * (size_t)aug.out_h * aug.out_w, "crop");
    if (a->record >= set.count) {
        fprintf(stderr, "bigbatch data crop: --record %ld: the store has %d\n", a->record, set.count);
        rc = 1;
    } else if (store_crop_one(&set, (uint32_t)a->record, &aug, (uint64_t)a->epoch, out, &err) != 0) {
        fprintf(stderr, "bigbatch data crop: %s\n", err.msg);
        rc = 1;
    } else if (write_ppm(a->out, out, aug.out_h, aug.out_w) != 0) {
        fprintf(stderr, "bigbatch data crop: %s: cannot write\n", a->out);
        rc = 1;
    }
    free(out);
    imageset_free(&set);
    return rc;
}

static int data_rrc(const DataArgs *a)
{
    if (a->width < 1 || a->height < 1 || a->count < 1) {
        fprintf(stderr, "bigbatch data rrc: needs --width, --height and --count\n%s", USAGE);
        return 2;
    }
    for (long i = 0; i < a->count; i++) {
        CropBox b = rrc_draw((int)a->width, (int)a->height, (uint64_t)a->seed, (uint64_t)a->epoch, (uint64_t)i);
        printf("%d %d %d %d %d\n", b.top, b.left, b.h, b.w, b.flip);
    }
    return 0;
}

/* The process's CPU seconds, all threads: a rate per CPU-second holds on a busy machine too. */
static double cpu_seconds(void)
{
    struct timespec t;
    return clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) == 0 ? (double)t.tv_sec + 1e-9 * (double)t.tv_nsec : 0;
}

/* img/s of batch_store_crop over the first `images` records with `threads` threads, and the
 * images per CPU-second in *per_cpu. */
static double crop_rate(const ImageSet *set, const Augment *aug, int images, int threads, uint8_t *out, double *per_cpu)
{
    uint32_t *idx = xmalloc(sizeof *idx * (size_t)images, "bench order");
    for (int i = 0; i < images; i++) idx[i] = (uint32_t)(i % set->count);
    batch_store_crop(set, idx, images < 64 ? images : 64, aug, 0, out, NULL, threads); /* warm the page cache */
    const double t0 = now_seconds(), c0 = cpu_seconds();
    batch_store_crop(set, idx, images, aug, 1, out, NULL, threads);
    const double dt = now_seconds() - t0, cpu = cpu_seconds() - c0;
    *per_cpu = cpu > 0 ? images / cpu : 0;
    free(idx);
    return images / dt;
}

static int data_bench(const DataArgs *a)
{
    Augment aug;
    if (!a->store || augment_of(a->augment, a, &aug) != 0) {
        if (!a->store) fprintf(stderr, "bigbatch data bench: needs --store\n%s", USAGE);
        return 2;
    }
    ImageSet set;
    Error err;
    if (jstore_read_set(a->store, &set, NULL, NULL, &err) != 0) {
        fprintf(stderr, "bigbatch data bench: %s\n", err.msg);
        return 1;
    }
    const int images = a->images ? (int)a->images : 2000, threads = (int)a->threads;
    uint8_t *out = xmalloc(3 * (size_t)aug.out_h * aug.out_w * (size_t)images, "bench batch");
    double per_cpu;
    const double one = crop_rate(&set, &aug, images, 1, out, &per_cpu);
    const double all = crop_rate(&set, &aug, images, threads, out, &per_cpu);
    printf("loader=bigbatch augment=%s size=%d images=%d threads=%d img_s_1thread=%.0f img_s=%.0f img_s_per_core=%.0f "
           "img_per_cpu_s=%.0f\n",
           a->augment ? a->augment : "rrc", aug.out_h, images, threads, one, all, all / threads, per_cpu);
    free(out);
    imageset_free(&set);
    return 0;
}

int cli_data(int argc, char **argv)
{
    const char *sub = argc > 1 ? argv[1] : "";
    if (!strcmp(sub, "--help") || !strcmp(sub, "-h")) {
        flag_table_usage(&TABLE, stdout);
        return 0;
    }
    DataArgs a;
    data_defaults(&a);
    if (!strcmp(sub, "check")) return data_check(argc, argv);
    int parsed = parse(argc, argv, &a);
    if (parsed == 1) flag_table_usage(&TABLE, stdout);
    if (parsed != 0) return parsed < 0 ? 2 : 0;
    if (a.threads < 1) a.threads = 1;
    if (!strcmp(sub, "pack")) return data_pack(&a);
    if (!strcmp(sub, "crop")) return data_crop(&a);
    if (!strcmp(sub, "rrc")) return data_rrc(&a);
    if (!strcmp(sub, "bench")) return data_bench(&a);
    fprintf(stderr, "bigbatch data: unknown subcommand '%s'\n%s", sub, USAGE);
    return 2;
}
