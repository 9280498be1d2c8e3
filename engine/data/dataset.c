/* dataset_load maps a dataset name to its files and readers, checks that what was
 * read is consistent (label counts, label range, train and test alike), and computes
 * the per-channel normalization from the training pixels, so every dataset is
 * normalized the same way without hard-coded constants. */
#include "data.h"
#include "../base/name_table.h"
#include "cifar_bin.h"
#include "jpeg_store.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FASHION_ROOT "/usr/share/datasets/fashion-mnist"
#define FASHION_HINT "install the Debian package dataset-fashion-mnist: make deps"
/* Defaults inside the working directory only: the official binary batches as their
 * tarball unpacks into data/, or JPEG folders (unpacked from $BIGBATCH_CIFAR10_TAR). */
#define CIFAR_BIN_ROOT "data/cifar-10-batches-bin"
#define CIFAR_ROOT "data/cifar10-jpeg"
#define MAX_CLASSES 1000 /* Dataset.class_names */

static const char *const FASHION_CLASSES[10] = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                                "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};

void dataset_free(Dataset *ds)
{
    if (!ds) return;
    imageset_free(&ds->train);
    imageset_free(&ds->test);
}


static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Prefixes err with the dataset name: "fashion-mnist: <what went wrong>". */
static void prefix(Error *err, const char *name)
{
    Error inner = *err;
    error_set(err, "%s: %s", name, inner.msg);
}

/* ---- Fashion-MNIST (IDX files) ---- */

/* Reads root/<images>[.gz] and root/<labels>[.gz] into set (the .gz name is preferred
 * and named in errors; an uncompressed copy is used when only that exists). */
static int load_idx_split(const char *root, bool default_root, const char *images, const char *labels,
                          int classes, ImageSet *set, Error *err)
{
    char *img_path = NULL, *lab_path = NULL;
    const char *names[2] = {images, labels};
    char **paths[2] = {&img_path, &lab_path};
    for (int k = 0; k < 2; k++) {
        char *raw = path_join(root, names[k]);
        char *gz;
        if (asprintf(&gz, "%s.gz", raw) < 0) {
            fprintf(stderr, "bigbatch: out of memory building a path\n");
            exit(3);
        }
        bool use_raw = !exists(gz) && exists(raw);
        *paths[k] = use_raw ? raw : gz;
        free(use_raw ? gz : raw);
    }
    ImageSet lab = {0};
    int rc = 0;
    for (int k = 0; k < 2 && rc == 0; k++) {
        if (!exists(*paths[k])) {
            error_set(err, "%s: %s%s%s%s", *paths[k], strerror(errno), default_root ? " (" : "",
                      default_root ? FASHION_HINT : "", default_root ? ")" : "");
            rc = -1;
        }
    }
    if (rc == 0) rc = idx_read_images(img_path, set, err);
    if (rc == 0) rc = idx_read_labels(lab_path, &lab, err);
    if (rc == 0 && lab.count != set->count) {
        error_set(err, "%s has %d labels, but %s has %d images", lab_path, lab.count, img_path, set->count);
        rc = -1;
    }
    for (int i = 0; rc == 0 && i < lab.count; i++) {
        if (lab.labels[i] >= classes) {
            error_set(err, "%s: label %d of item %d is out of range (%d classes)", lab_path, lab.labels[i], i,
                      classes);
            rc = -1;
        }
    }
    if (rc == 0) {
        set->labels = lab.labels;
        lab.labels = NULL;
    } else {
        imageset_free(set);
    }
    imageset_free(&lab);
    free(img_path);
    free(lab_path);
    return rc;
}

static int load_fashion(const DataOptions *opt, Dataset *ds, Error *err)
{
    const char *root = opt->root ? opt->root : FASHION_ROOT;
    snprintf(ds->root, sizeof ds->root, "%s", root);
    ds->classes = 10;
    for (int k = 0; k < 10; k++) snprintf(ds->class_names[k], sizeof ds->class_names[k], "%s", FASHION_CLASSES[k]);
    if (load_idx_split(root, !opt->root, "train-images-idx3-ubyte", "train-labels-idx1-ubyte", 10, &ds->train,
                       err) != 0 ||
        load_idx_split(root, !opt->root, "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte", 10, &ds->test,
                       err) != 0)
        return -1;
    return 0;
}

/* ---- image folders (CIFAR-10, ImageNet layout) ---- */

/* root/train.bbjpeg and root/val.bbjpeg (or test), packed by `bigbatch data pack`: true when
 * both are there (*eval_split gets the second's name). */
static bool has_stores(const char *root, const char **eval_split)
{
    const char *evals[2] = {"val", "test"};
    char *train = NULL;
    if (asprintf(&train, "%s/train%s", root, JSTORE_SUFFIX) < 0) return false;
    bool ok = exists(train);
    free(train);
    for (int k = 0; ok && k < 2; k++) {
        char *p = NULL;
        if (asprintf(&p, "%s/%s%s", root, evals[k], JSTORE_SUFFIX) < 0) return false;
        bool here = exists(p);
        free(p);
        if (here) {
            *eval_split = evals[k];
            return true;
        }
    }
    return false;
}

/* The two packed stores of root (has_stores), mapped. */
static int load_stores(const char *root, const char *eval_split, Dataset *ds, Error *err)
{
    snprintf(ds->root, sizeof ds->root, "%s", root);
    const char *splits[2] = {"train", eval_split};
    ImageSet *sets[2] = {&ds->train, &ds->test};
    char(*test_names)[32] = xcalloc(MAX_CLASSES, 32, "class names");
    char(*names[2])[32] = {ds->class_names, test_names};
    int classes[2] = {0, 0}, rc = 0;
    for (int k = 0; k < 2 && rc == 0; k++) {
        char *path = NULL;
        if (asprintf(&path, "%s/%s%s", root, splits[k], JSTORE_SUFFIX) < 0) {
            fprintf(stderr, "bigbatch: out of memory building a path\n");
            exit(3);
        }
        rc = jstore_read_set(path, sets[k], names[k], &classes[k], err);
        if (rc == 0 && classes[k] > MAX_CLASSES) {
            error_set(err, "%s: %d classes, at most %d supported", path, classes[k], MAX_CLASSES);
            rc = -1;
        }
        free(path);
    }
    if (rc == 0 && (classes[0] != classes[1] || memcmp(names[0], names[1], 32 * (size_t)classes[0]) != 0)) {
        error_set(err, "%s: train%s and %s%s have different classes (%d and %d)", root, JSTORE_SUFFIX, eval_split,
                  JSTORE_SUFFIX, classes[0], classes[1]);
        rc = -1;
    }
    ds->classes = classes[0];
    free(test_names);
    return rc;
}

/* Reads root/train and root/test (or root/val, ImageNet's name), caching each beside
 * them (root/train.bbimg, or root/train.256.bbimg at --image-size 256) when root is
 * writable. `what` names the data in the one-line "decoding" notice. */
static int load_folders(const char *root, const char *what, int image_size, bool quiet, Dataset *ds, Error *err)
{
    /* packed stores win unless --image-size asks for the decoded cache */
    const char *eval_split = NULL;
    if (image_size == 0 && has_stores(root, &eval_split)) return load_stores(root, eval_split, ds, err);
    snprintf(ds->root, sizeof ds->root, "%s", root);
    bool can_cache = access(root, W_OK) == 0;
    if (!can_cache && !quiet) fprintf(stderr, "note: %s is not writable; decoding without a cache\n", root);
    char *test_dir = path_join(root, "test"), *val_dir = path_join(root, "val");
    const char *test_split = !exists(test_dir) && exists(val_dir) ? "val" : "test";
    free(test_dir);
    free(val_dir);
    char(*test_names)[32] = xcalloc(MAX_CLASSES, 32, "class names");
    const char *splits[2] = {"train", test_split};
    ImageSet *sets[2] = {&ds->train, &ds->test};
    char(*names[2])[32] = {ds->class_names, test_names};
    int classes[2] = {0, 0};
    int rc = 0;
    for (int k = 0; k < 2 && rc == 0; k++) {
        char *dir = path_join(root, splits[k]), *cache = NULL;
        FolderOptions fo = {.image_size = image_size, .max_classes = MAX_CLASSES};
        if (can_cache) {
            int n = image_size > 0 ? asprintf(&cache, "%s.%d.bbimg", dir, image_size) : asprintf(&cache, "%s.bbimg", dir);
            if (n < 0) {
                fprintf(stderr, "bigbatch: out of memory building a path\n");
                exit(3);
            }
            fo.cache_path = cache;
            if (!quiet && !imagefolder_cache_valid(&fo))
                fprintf(stderr, "decoding %s JPEGs once into %s ...\n", what, cache);
        }
        rc = imagefolder_read(dir, &fo, sets[k], names[k], &classes[k], err);
        free(dir);
        free(cache);
    }
    if (rc == 0) {
        bool same = classes[0] == classes[1];
        for (int k = 0; same && k < classes[0]; k++) same = strcmp(names[0][k], names[1][k]) == 0;
        if (!same) {
            error_set(err, "%s/train and %s/%s have different class folders (%d and %d classes)", root, root,
                      test_split, classes[0], classes[1]);
            rc = -1;
        }
    }
    ds->classes = classes[0];
    free(test_names);
    return rc;
}

/* The official binary distribution: root itself or root/cifar-10-batches-bin (the folder
 * its tarball unpacks to). */
static int load_cifar10_binary(const DataOptions *opt, const char *root, Dataset *ds, Error *err)
{
    if (opt->image_size > 0 && opt->image_size != 32) {
        error_set(err, "%s: the binary CIFAR-10 holds 32x32 images; --image-size %d applies to JPEG folders",
                  root, opt->image_size);
        return -1;
    }
    snprintf(ds->root, sizeof ds->root, "%s", root);
    int classes = cifar_bin_read(root, opt->partial_batches, &ds->train, &ds->test, ds->class_names, err);
    if (classes < 0) return -1;
    ds->classes = classes;
    return 0;
}

/* CIFAR-10: the official binary batches, or JPEG class folders (train/, test/), unpacked
 * from a tarball on first use. */
static int load_cifar10(const DataOptions *opt, Dataset *ds, Error *err)
{
    if (!opt->root && cifar_bin_present(CIFAR_BIN_ROOT)) return load_cifar10_binary(opt, CIFAR_BIN_ROOT, ds, err);
    const char *root = opt->root ? opt->root : CIFAR_ROOT;
    if (cifar_bin_present(root)) return load_cifar10_binary(opt, root, ds, err);
    char *batches = path_join(root, "cifar-10-batches-bin");
    if (cifar_bin_present(batches)) {
        int rc = load_cifar10_binary(opt, batches, ds, err);
        free(batches);
        return rc;
    }
    free(batches);
    char *train = path_join(root, "train");
    bool present = exists(train);
    if (!present) {
        const char *tar = getenv("BIGBATCH_CIFAR10_TAR");
        if (!tar || !*tar) {
            error_set(err, "no CIFAR-10 at %s: give --data-root the folder of the binary batches "
                      "(cifar-10-batches-bin, README: Data) or of train/ and test/ JPEG folders, or set "
                      "BIGBATCH_CIFAR10_TAR to a tarball holding cifar10-jpeg/",
                      root);
            free(train);
            return -1;
        }
        if (!exists(tar)) {
            int e = errno;
            error_set(err, "%s: %s, and there is no tarball to unpack at %s (BIGBATCH_CIFAR10_TAR): %s", train,
                      strerror(ENOENT), tar, strerror(e));
            free(train);
            return -1;
        }
        if (unpack_tarball(tar, root, opt->quiet, err) != 0) {
            free(train);
            return -1;
        }
    }
    free(train);
    return load_folders(root, "CIFAR-10", opt->image_size, opt->quiet, ds, err);
}

/* ---- synthetic ---- */

static int load_synthetic(const DataOptions *opt, Dataset *ds, Error *err)
{
    int c = opt->synth_c ? opt->synth_c : 3, h = opt->synth_h ? opt->synth_h : 32;
    int w = opt->synth_w ? opt->synth_w : 32, classes = opt->synth_classes ? opt->synth_classes : 10;
    int ntrain = opt->synth_train ? opt->synth_train : 1024, ntest = opt->synth_test ? opt->synth_test : 256;
    if (synthetic_make(&ds->train, ntrain, c, h, w, classes, opt->seed, 1, err) != 0 ||
        synthetic_make(&ds->test, ntest, c, h, w, classes, opt->seed, 2, err) != 0)
        return -1;
    ds->classes = classes;
    for (int k = 0; k < classes; k++) snprintf(ds->class_names[k], sizeof ds->class_names[k], "band%d", k);
    return 0;
}

static int load_imagefolder(const DataOptions *opt, Dataset *ds, Error *err)
{
    if (!opt->root) {
        error_set(err, "needs a root folder holding train/<class>/*.jpg and test/<class>/*.jpg");
        return -1;
    }
    return load_folders(opt->root, opt->root, opt->image_size, opt->quiet, ds, err);
}

/* ---- the table ---- */

/* Every data set: the one list that `train --data`, its help, train_config_check,
 * experiment files and the errors for an unknown name read. */
static const DatasetInfo DATASETS[] = {
    {"fashion-mnist", false, 10, load_fashion},
    {"cifar10", true, 10, load_cifar10},
    {"imagefolder", true, 0, load_imagefolder},
    {"synthetic", false, 0, load_synthetic},
};
enum { N_DATASETS = (int)(sizeof DATASETS / sizeof DATASETS[0]) };
static const NameTable NAMES = NAME_TABLE(DATASETS);

const DatasetInfo *dataset_list(int *count)
{
    *count = N_DATASETS;
    return DATASETS;
}

const DatasetInfo *dataset_find(const char *name)
{
    return name_table_find(NAMES, name);
}

char *dataset_names(char *buf, size_t len, const char *sep, const char *last_sep)
{
    return name_table_join(NAMES, buf, len, sep, last_sep);
}

int dataset_check_name(const char *name, Error *err)
{
    return dataset_find(name) ? 0 : name_table_unknown(NAMES, "dataset", name, "expected ", " or ", err);
}

int dataset_load(const DataOptions *opt, Dataset *ds, Error *err)
{
    memset(ds, 0, sizeof *ds);
    const char *name = opt->name ? opt->name : "";
    snprintf(ds->name, sizeof ds->name, "%s", name);
    const DatasetInfo *info = dataset_find(name);
    if (!info) return dataset_check_name(name, err);
    int rc = info->load(opt, ds, err);
    if (rc == 0 && (ds->train.c != ds->test.c || ds->train.h != ds->test.h || ds->train.w != ds->test.w)) {
        error_set(err, "%s%strain images are %dx%dx%d but test images are %dx%dx%d", ds->root, ds->root[0] ? ": " : "",
                  ds->train.c, ds->train.h, ds->train.w, ds->test.c, ds->test.h, ds->test.w);
        rc = -1;
    }
    if (rc == 0 && ds->train.c > 3) {
        error_set(err, "%d channels, at most 3 supported", ds->train.c);
        rc = -1;
    }
    if (rc != 0) {
        prefix(err, name);
        dataset_free(ds);
        memset(ds, 0, sizeof *ds);
        return -1;
    }
    imageset_stats(&ds->train, ds->mean, ds->std);
    return 0;
}
