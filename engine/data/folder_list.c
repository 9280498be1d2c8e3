/* Listing an image folder (folder_list.h). */
#include "folder_list.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

void folder_names_add(Names *l, const char *s)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->items = xrealloc(l->items, l->cap * sizeof *l->items, "file name list");
    }
    l->items[l->n++] = xstrdup(s);
}

void folder_names_free(Names *l)
{
    for (size_t i = 0; i < l->n; i++) free(l->items[i]);
    free(l->items);
    *l = (Names){0};
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}


static bool is_jpeg_name(const char *s)
{
    const char *dot = strrchr(s, '.');
    return dot && (strcasecmp(dot, ".jpg") == 0 || strcasecmp(dot, ".jpeg") == 0);
}

/* Lists the subdirectories (want_dirs) or JPEG files of dir, sorted in strcmp order
 * so that labels do not depend on the locale or the file system. Hidden entries are
 * skipped. */
int list_dir(const char *dir, bool want_dirs, Names *out, Error *err)
{
    DIR *d = opendir(dir);
    if (!d) {
        error_set(err, "%s: %s", dir, strerror(errno));
        return -1;
    }
    for (;;) {
        errno = 0;
        struct dirent *e = readdir(d);
        if (!e) {
            if (errno) {
                error_set(err, "%s: %s", dir, strerror(errno));
                closedir(d);
                return -1;
            }
            break;
        }
        if (e->d_name[0] == '.') continue;
        if (!want_dirs && !is_jpeg_name(e->d_name)) continue;
        bool is_dir = e->d_type == DT_DIR, is_reg = e->d_type == DT_REG;
        if (e->d_type == DT_UNKNOWN || e->d_type == DT_LNK) {
            char *p = path_join(dir, e->d_name);
            struct stat st;
            int rc = stat(p, &st);
            if (rc != 0) error_set(err, "%s: %s", p, strerror(errno));
            free(p);
            if (rc != 0) {
                closedir(d);
                return -1;
            }
            is_dir = S_ISDIR(st.st_mode), is_reg = S_ISREG(st.st_mode);
        }
        if (want_dirs ? is_dir : is_reg) folder_names_add(out, e->d_name);
    }
    closedir(d);
    if (out->n) qsort(out->items, out->n, sizeof *out->items, cmp_name);
    return 0;
}

/* Lists every image of every class folder, in order, with its label. */
int list_images(const char *dir, const Names *classes, Names *files, uint16_t **labels, Error *err)
{
    size_t cap = 0;
    *labels = NULL;
    for (size_t k = 0; k < classes->n; k++) {
        char *cdir = path_join(dir, classes->items[k]);
        Names in = {0};
        int rc = list_dir(cdir, false, &in, err);
        for (size_t i = 0; rc == 0 && i < in.n; i++) {
            char *p = path_join(cdir, in.items[i]);
            folder_names_add(files, p);
            free(p);
            if (files->n > cap) {
                cap = files->cap;
                *labels = xrealloc(*labels, cap * sizeof **labels, "labels");
            }
            (*labels)[files->n - 1] = (uint16_t)k;
        }
        folder_names_free(&in);
        free(cdir);
        if (rc != 0) return -1;
    }
    if (files->n == 0 || files->n > INT_MAX) {
        error_set(err, "%s: %s", dir, files->n ? "too many images" : "no .jpg/.jpeg files in any class folder");
        return -1;
    }
    return 0;
}

