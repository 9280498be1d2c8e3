/* CIFAR-10's official binary distribution (cifar-10-batches-bin/), a reader beside idx.c
 * and imagefolder.c. */
#ifndef BB_CIFAR_BIN_H
#define BB_CIFAR_BIN_H
#include <stdbool.h>

#include "../base/util.h"
#include "imageset.h"

/* True when dir holds data_batch_1.bin (the binary distribution rather than JPEG folders). */
bool cifar_bin_present(const char *dir);
/* Reads dir/data_batch_{1..5}.bin into train and dir/test_batch.bin into test, and the class
 * names (batches.meta.txt, else the standard ones); returns the number of classes (10), or -1
 * with err naming the file and the record at fault (both sets left empty). Each file must hold
 * the official 10,000 records unless partial. */
int cifar_bin_read(const char *dir, bool partial, ImageSet *train, ImageSet *test, char names[][32], Error *err);

#endif
