/* The official binary distribution of CIFAR-10 (cifar-10-binary.tar.gz, unpacked as
 * cifar-10-batches-bin/): data_batch_1.bin .. data_batch_5.bin for training and
 * test_batch.bin, each a sequence of 3,073-byte records, one label byte (0-9) and the
 * 32 x 32 image as 1,024 red, 1,024 green and 1,024 blue bytes, rows top to bottom: the CHW
 * order ImageSet holds. Class names come from batches.meta.txt (one per line) when it is
 * there. Reference: https://www.cs.toronto.edu/~kriz/cifar.html */
#include "cifar_bin.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { SIDE = 32, PIXELS = 3 * SIDE * SIDE, RECORD = 1 + PIXELS, CLASSES = 10, PER_FILE = 10000 };

static const char *const TRAIN_FILES[] = {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
                                          "data_batch_4.bin", "data_batch_5.bin"};
static const char *const TEST_FILES[] = {"test_batch.bin"};
/* batches.meta.txt's names, for a folder without it. */
static const char *const CLASS_NAMES[CLASSES] = {"airplane", "automobile", "bird", "cat", "deer",
                                                 "dog",      "frog",       "horse", "ship", "truck"};


bool cifar_bin_present(const char *dir)
{
    char *p = path_join(dir, TRAIN_FILES[0]);
    struct stat st;
    bool present = stat(p, &st) == 0;
    free(p);
    return present;
}

/* The records in path: its size, which must be a whole number of records, and 10,000 of them
 * unless partial (a file cut at a record boundary would otherwise train on less in silence). */
static long records_in(const char *path, bool partial, Error *err)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        error_set(err, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (st.st_size <= 0 || st.st_size % RECORD != 0) {
        error_set(err, "%s: %lld bytes, not a whole number of %d-byte records (1 label byte + 32x32x3 pixels)",
                  path, (long long)st.st_size, RECORD);
        return -1;
    }
    long n = (long)(st.st_size / RECORD);
    if (!partial && n != PER_FILE) {
        error_set(err, "%s: %ld records, not the %d of an official CIFAR-10 batch file (truncated? "
                  "--partial-batches reads smaller files)", path, n, PER_FILE);
        return -1;
    }
    return n;
}

/* Appends the records of path to set, whose arrays have room for them. */
static int read_records(const char *path, long count, ImageSet *set, Error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        error_set(err, "%s: %s", path, strerror(errno));
        return -1;
    }
    uint8_t record[RECORD];
    int rc = 0;
    for (long i = 0; i < count && rc == 0; i++) {
        if (fread(record, 1, RECORD, f) != RECORD) {
            error_set(err, "%s: record %ld: %s", path, i, ferror(f) ? strerror(errno) : "file ended early");
            rc = -1;
        } else if (record[0] >= CLASSES) {
            error_set(err, "%s: record %ld has label %d (CIFAR-10 labels are 0 to 9)", path, i, record[0]);
            rc = -1;
        } else {
            set->labels[set->count] = record[0];
            memcpy(set->pixels + (size_t)set->count * PIXELS, record + 1, PIXELS);
            set->count++;
        }
    }
    fclose(f);
    return rc;
}

static int read_split(const char *dir, const char *const *files, int n_files, bool partial, ImageSet *set,
                      Error *err)
{
    long counts[8], total = 0;
    char *paths[8];
    int rc = 0;
    for (int k = 0; k < n_files; k++) paths[k] = path_join(dir, files[k]);
    for (int k = 0; k < n_files && rc == 0; k++) {
        counts[k] = records_in(paths[k], partial, err);
        if (counts[k] < 0) rc = -1;
        else total += counts[k];
    }
    if (rc == 0) {
        *set = (ImageSet){.c = 3, .h = SIDE, .w = SIDE};
        set->pixels = xmalloc((size_t)total * PIXELS, "CIFAR-10 images");
        set->labels = xmalloc((size_t)total * sizeof *set->labels, "CIFAR-10 labels");
    }
    for (int k = 0; k < n_files && rc == 0; k++) rc = read_records(paths[k], counts[k], set, err);
    for (int k = 0; k < n_files; k++) free(paths[k]);
    if (rc != 0) imageset_free(set);
    return rc;
}

/* names[k] from batches.meta.txt's lines, or the standard names where it is missing. */
static void read_class_names(const char *dir, char names[][32])
{
    for (int k = 0; k < CLASSES; k++) snprintf(names[k], 32, "%s", CLASS_NAMES[k]);
    char *path = path_join(dir, "batches.meta.txt");
    FILE *f = fopen(path, "r");
    free(path);
    if (!f) return;
    char line[256];
    for (int k = 0; k < CLASSES && fgets(line, sizeof line, f);) {
        line[strcspn(line, "\r\n")] = 0;
        line[31] = 0; /* names are at most 31 characters */
        if (line[0]) memcpy(names[k++], line, 32);
    }
    fclose(f);
}

int cifar_bin_read(const char *dir, bool partial, ImageSet *train, ImageSet *test, char names[][32], Error *err)
{
    if (read_split(dir, TRAIN_FILES, 5, partial, train, err) != 0) return -1;
    if (read_split(dir, TEST_FILES, 1, partial, test, err) != 0) {
        imageset_free(train);
        return -1;
    }
    read_class_names(dir, names);
    return CLASSES;
}
