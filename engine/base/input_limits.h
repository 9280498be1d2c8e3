/* The largest values bigbatch accepts, wherever they come from (train, sweep and bench flags,
 * experiment files, image files): beyond them a run cannot be meant, and sizes computed from
 * them stay far from overflow. docs/cli.md's "Limits" lists them. */
#ifndef BB_INPUT_LIMITS_H
#define BB_INPUT_LIMITS_H

enum {
    BB_MAX_THREADS = 1024,     /* --threads: one process's threads */
    BB_MAX_BATCH = 1 << 20,    /* --batch, --eval-batch, --micro-batch, --base-batch: 1,048,576 */
    BB_MAX_IMAGE_SIDE = 16384, /* --image-size, and a JPEG's width or height, checked before decoding */
    BB_MAX_PROCESSES = 65536,  /* --ranks, --workers, --workers-emulated */
};

#endif
