/* Test-only reader for the reference fixtures (see reference_fixture.h and the
 * format description at the top of tests/make_reference.py). Included by
 * tests/test_reference.c, not compiled on its own. */
#include "reference_fixture.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fx_fail(char *err, size_t err_len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fx_fail(char *err, size_t err_len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
    return -1;
}

static int fx_read_file(const char *path, unsigned char **data, size_t *len, char *err, size_t err_len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return fx_fail(err, err_len, "%s: cannot open (run from the repository root?)", path);
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return fx_fail(err, err_len, "%s: cannot seek", path);
    }
    long size = ftell(f);
    rewind(f);
    if (size < 8) {
        fclose(f);
        return fx_fail(err, err_len, "%s: too short (%ld bytes)", path, size);
    }
    unsigned char *buf = malloc((size_t)size);
    if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size) {
        free(buf);
        fclose(f);
        return fx_fail(err, err_len, "%s: read failed", path);
    }
    fclose(f);
    *data = buf;
    *len = (size_t)size;
    return 0;
}

static uint64_t fx_le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static uint32_t fx_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int fixture_load(Fixture *fx, const char *path, char *err, size_t err_len)
{
    memset(fx, 0, sizeof *fx);
    unsigned char *file = NULL;
    size_t len = 0;
    if (fx_read_file(path, &file, &len, err, err_len)) return -1;
    uint64_t header_len = fx_le64(file);
    if (header_len > len - 8) {
        free(file);
        return fx_fail(err, err_len, "%s: header length %llu beyond the file (%zu bytes)", path,
                       (unsigned long long)header_len, len);
    }
    cJSON *root = cJSON_ParseWithLength((const char *)file + 8, (size_t)header_len);
    if (!root || !cJSON_IsObject(root)) {
        cJSON_Delete(root);
        free(file);
        return fx_fail(err, err_len, "%s: header is not a JSON object", path);
    }
    const unsigned char *data = file + 8 + header_len;
    size_t data_len = len - 8 - (size_t)header_len;

    int n = cJSON_GetArraySize(root);
    fx->tensors = calloc((size_t)n, sizeof *fx->tensors);
    fx->storage = malloc(data_len ? data_len : 1); /* 4-byte elements: aligned copies */
    if (!fx->tensors || !fx->storage) {
        cJSON_Delete(root);
        free(file);
        fixture_free(fx);
        return fx_fail(err, err_len, "out of memory");
    }
    int rc = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, root)
    {
        if (!strcmp(item->string, "__metadata__")) {
            int m = cJSON_GetArraySize(item);
            fx->meta_keys = calloc((size_t)m + 1, sizeof *fx->meta_keys);
            fx->meta_values = calloc((size_t)m + 1, sizeof *fx->meta_values);
            const cJSON *kv;
            cJSON_ArrayForEach(kv, item)
            {
                if (!cJSON_IsString(kv)) {
                    rc = fx_fail(err, err_len, "%s: metadata %s is not a string", path, kv->string);
                    goto done;
                }
                snprintf(fx->meta_keys[fx->n_meta], sizeof fx->meta_keys[0], "%s", kv->string);
                snprintf(fx->meta_values[fx->n_meta], sizeof fx->meta_values[0], "%s", kv->valuestring);
                fx->n_meta++;
            }
            continue;
        }
        FxTensor *t = &fx->tensors[fx->n_tensors];
        if (strlen(item->string) >= sizeof t->name) {
            rc = fx_fail(err, err_len, "%s: tensor name too long: %s", path, item->string);
            goto done;
        }
        snprintf(t->name, sizeof t->name, "%s", item->string);
        const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(item, "dtype");
        const cJSON *shape = cJSON_GetObjectItemCaseSensitive(item, "shape");
        const cJSON *offs = cJSON_GetObjectItemCaseSensitive(item, "data_offsets");
        if (!cJSON_IsString(dtype) || !cJSON_IsArray(shape) || !cJSON_IsArray(offs) ||
            cJSON_GetArraySize(offs) != 2) {
            rc = fx_fail(err, err_len, "%s: tensor %s: malformed entry", path, t->name);
            goto done;
        }
        if (!strcmp(dtype->valuestring, "F32")) t->dtype = FX_F32;
        else if (!strcmp(dtype->valuestring, "I32")) t->dtype = FX_I32;
        else {
            rc = fx_fail(err, err_len, "%s: tensor %s: unsupported dtype %s", path, t->name,
                         dtype->valuestring);
            goto done;
        }
        t->ndim = cJSON_GetArraySize(shape);
        if (t->ndim > FX_MAX_DIMS) {
            rc = fx_fail(err, err_len, "%s: tensor %s: %d dimensions", path, t->name, t->ndim);
            goto done;
        }
        t->count = 1;
        int d = 0;
        const cJSON *dim;
        cJSON_ArrayForEach(dim, shape)
        {
            if (!cJSON_IsNumber(dim) || dim->valuedouble < 0) {
                rc = fx_fail(err, err_len, "%s: tensor %s: bad shape", path, t->name);
                goto done;
            }
            t->shape[d++] = (int64_t)dim->valuedouble;
            t->count *= (size_t)dim->valuedouble;
        }
        double begin = cJSON_GetArrayItem(offs, 0)->valuedouble;
        double end = cJSON_GetArrayItem(offs, 1)->valuedouble;
        if (begin < 0 || end < begin || end > (double)data_len || (size_t)begin % 4 ||
            (size_t)(end - begin) != t->count * 4) {
            rc = fx_fail(err, err_len, "%s: tensor %s: data_offsets [%.0f, %.0f] do not fit %zu elements "
                         "in %zu data bytes", path, t->name, begin, end, t->count, data_len);
            goto done;
        }
        /* Decode little-endian into the aligned storage at the same offset. */
        const unsigned char *src = data + (size_t)begin;
        uint32_t *dst = (uint32_t *)((unsigned char *)fx->storage + (size_t)begin);
        for (size_t i = 0; i < t->count; i++) dst[i] = fx_le32(src + 4 * i);
        if (t->dtype == FX_F32) t->f32 = (const float *)dst;
        else t->i32 = (const int32_t *)dst;
        fx->n_tensors++;
    }
done:
    cJSON_Delete(root);
    free(file);
    if (rc) fixture_free(fx);
    return rc;
}

void fixture_free(Fixture *fx)
{
    free(fx->tensors);
    free(fx->meta_keys);
    free(fx->meta_values);
    free(fx->storage);
    memset(fx, 0, sizeof *fx);
}

const FxTensor *fixture_get(const Fixture *fx, const char *name)
{
    for (int i = 0; i < fx->n_tensors; i++)
        if (!strcmp(fx->tensors[i].name, name)) return &fx->tensors[i];
    return NULL;
}

const char *fixture_meta(const Fixture *fx, const char *key)
{
    for (int i = 0; i < fx->n_meta; i++)
        if (!strcmp(fx->meta_keys[i], key)) return fx->meta_values[i];
    return NULL;
}
