/* Listing an image folder, dir/<class>/<name>.jpg (folder_list.c): class folders and files
 * sorted in strcmp order, so labels depend on neither the locale nor the file system. Shared
 * by the decoded cache (imagefolder.c) and the packed store's writer (pack.c). */
#ifndef BB_FOLDER_LIST_H
#define BB_FOLDER_LIST_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/util.h"

typedef struct {
    char **items;
    size_t n, cap;
} Names;

void folder_names_add(Names *l, const char *s);
void folder_names_free(Names *l);
/* The subdirectories (want_dirs) or .jpg/.jpeg files (any case) of dir, sorted; hidden
 * entries skipped. */
int list_dir(const char *dir, bool want_dirs, Names *out, Error *err);
/* Every image of every class folder of dir, in order, as paths, with its label (the class's
 * index) in *labels (allocated). An error when there are none. */
int list_images(const char *dir, const Names *classes, Names *files, uint16_t **labels, Error *err);

#endif
