/* Checkpoints as safetensors: u64 little-endian header length N, N bytes of JSON
 * (padded with spaces to a multiple of 8), then the tensors' raw F32 little-endian
 * bytes; each header entry's data_offsets are relative to the start of that byte
 * buffer. The JSON is written and parsed with cJSON. Saving goes through
 * "<path>.tmp" + fsync + rename; loading validates the whole header against the
 * net and optimizer before it overwrites anything. */
#include "checkpoint.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/fault.h"

#define CKPT_FORMAT "bigbatch-checkpoint-1"
#define CKPT_MAX_HEADER ((uint64_t)100 << 20) /* safetensors' own limit */
#define CKPT_MAX_DIMS 8
#define CHUNK 16384 /* elements converted per fwrite/fread */

/* One tensor the checkpoint must hold: a parameter, a buffer or an optimizer slot. */
typedef struct {
    char *name;
    const Tensor *tensor; /* its values cross by bk_download / bk_upload */
    size_t count;
    int ndim;
    int64_t shape[4];
    uint64_t begin; /* byte offset in the data buffer (loading) */
} Entry;

typedef struct {
    Entry *v;
    int n, cap;
} EntryList;

static void entries_free(EntryList *l)
{
    for (int i = 0; i < l->n; i++) free(l->v[i].name);
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

static Entry *entries_add(EntryList *l, const char *name, const Tensor *t)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->v = xrealloc(l->v, sizeof *l->v * (size_t)l->cap, "checkpoint entries");
    }
    Entry *e = &l->v[l->n++];
    memset(e, 0, sizeof *e);
    e->name = xstrdup(name);
    e->tensor = t;
    e->count = tensor_count(t);
    return e;
}

/* PyTorch's shape for a parameter: conv weights [out, in/groups, k, k], linear
 * weights [out, in], vectors (biases, BN affine) [n]. Layers that store other
 * kinds of parameters drop leading 1-dims (keeping at least one). */
static void param_shape(const Net *net, const Param *p, Entry *e)
{
    const char *kind = net->layers[p->layer].ops->kind;
    int64_t d[4] = {p->n, p->c, p->h, p->w};
    int first;
    if (p->kind == PARAM_WEIGHT && strcmp(kind, "conv") == 0)
        first = 0;
    else if (p->kind == PARAM_WEIGHT && strcmp(kind, "linear") == 0)
        first = 2;
    else if (p->n > 1)
        first = 0;
    else if (p->c > 1)
        first = 1;
    else if (p->h > 1)
        first = 2;
    else
        first = 3;
    e->ndim = 4 - first;
    for (int i = first; i < 4; i++) e->shape[i - first] = d[i];
}

static char *slot_key(const char *param, const char *slot)
{
    size_t len = strlen("optimizer.") + strlen(param) + 1 + strlen(slot) + 1;
    char *s = xmalloc(len, "checkpoint name");
    snprintf(s, len, "optimizer.%s.%s", param, slot);
    return s;
}

/* Every tensor of net (+ opt) in file order: parameters, buffers, optimizer slots. */
static int collect_entries(const Net *net, const Optimizer *opt, EntryList *l, Error *err)
{
    for (int i = 0; i < net->n_params; i++) {
        const Param *p = &net->params[i];
        Entry *e = entries_add(l, p->name, &p->value);
        param_shape(net, p, e);
    }
    for (int i = 0; i < net->n_buffers; i++) {
        const Buffer *b = &net->buffers[i];
        Entry *e = entries_add(l, b->name, &b->value);
        e->ndim = 1;
        e->shape[0] = (int64_t)e->count;
    }
    if (!opt) return 0;
    if (opt->n_params != net->n_params) {
        error_set(err, "optimizer has %d parameters but the net has %d", opt->n_params, net->n_params);
        return -1;
    }
    for (int i = 0; i < net->n_params; i++) {
        const Param *p = &net->params[i];
        for (int s = 0; s < opt->n_slots; s++) {
            const Tensor *t = &opt->slots[i * opt->n_slots + s];
            if (tensor_count(t) != tensor_count(&p->value)) {
                error_set(err, "optimizer slot %s of %s has %zu values, the parameter %zu",
                          opt->slot_names[s], p->name, tensor_count(t), tensor_count(&p->value));
                return -1;
            }
            char *key = slot_key(p->name, opt->slot_names[s]);
            Entry *e = entries_add(l, key, t);
            free(key);
            param_shape(net, p, e);
        }
    }
    return 0;
}

/* ---- byte order: the file is little-endian whatever the host is ---- */
static void put_u64_le(unsigned char *b, uint64_t v)
{
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_u64_le(const unsigned char *b)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)b[i] << (8 * i);
    return v;
}

static void put_f32_le(unsigned char *b, real x)
{
    float f = (float)x;
    uint32_t u;
    memcpy(&u, &f, 4);
    for (int i = 0; i < 4; i++) b[i] = (unsigned char)(u >> (8 * i));
}

static real get_f32_le(const unsigned char *b)
{
    uint32_t u = 0;
    for (int i = 0; i < 4; i++) u |= (uint32_t)b[i] << (8 * i);
    float f;
    memcpy(&f, &u, 4);
    return (real)f;
}

/* ---- saving ---- */

static cJSON *build_header(const Net *net, const Optimizer *opt, const TrainPosition *pos,
                           const EntryList *l)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *meta = cJSON_AddObjectToObject(root, "__metadata__");
    char num[32];
    TrainPosition zero;
    memset(&zero, 0, sizeof zero);
    if (!pos) pos = &zero;
    cJSON_AddStringToObject(meta, "format", CKPT_FORMAT);
    cJSON_AddStringToObject(meta, "model", net->model);
    cJSON_AddStringToObject(meta, "optimizer", opt ? opt->cfg.name : "");
    snprintf(num, sizeof num, "%ld", pos->step);
    cJSON_AddStringToObject(meta, "step", num);
    snprintf(num, sizeof num, "%d", pos->epoch);
    cJSON_AddStringToObject(meta, "epoch", num);
    snprintf(num, sizeof num, "%ld", pos->epoch_step);
    cJSON_AddStringToObject(meta, "epoch_step", num);
    snprintf(num, sizeof num, "%llu", pos->seed);
    cJSON_AddStringToObject(meta, "seed", num);
    snprintf(num, sizeof num, "%.17g", pos->epoch_loss_sum); /* round-trips exactly */
    cJSON_AddStringToObject(meta, "epoch_loss_sum", num);
    snprintf(num, sizeof num, "%ld", pos->epoch_hits);
    cJSON_AddStringToObject(meta, "epoch_hits", num);
    if (pos->first_loss > 0 && isfinite(pos->first_loss)) { /* 0: a test's literal, not a loss */
        snprintf(num, sizeof num, "%.17g", pos->first_loss);
        cJSON_AddStringToObject(meta, "first_loss", num);
    }
    snprintf(num, sizeof num, "%ld", opt ? opt->updates : 0L);
    cJSON_AddStringToObject(meta, "optimizer_updates", num);
    uint64_t off = 0;
    for (int i = 0; i < l->n; i++) {
        const Entry *e = &l->v[i];
        cJSON *t = cJSON_AddObjectToObject(root, e->name);
        cJSON_AddStringToObject(t, "dtype", "F32");
        cJSON *shape = cJSON_AddArrayToObject(t, "shape");
        for (int d = 0; d < e->ndim; d++)
            cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)e->shape[d]));
        cJSON *offs = cJSON_AddArrayToObject(t, "data_offsets");
        cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)off));
        off += 4 * (uint64_t)e->count;
        cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)off));
    }
    return root;
}

static int write_all(FILE *f, const void *buf, size_t bytes)
{
    if (fault_should_fail(FAULT_WRITE)) return -1;
    return fwrite(buf, 1, bytes, f) == bytes ? 0 : -1;
}

static int write_tensors(FILE *f, const EntryList *l)
{
    unsigned char *buf = xmalloc(4 * (size_t)CHUNK, "checkpoint write buffer");
    real *host = xmalloc(sizeof *host * CHUNK, "checkpoint write buffer");
    int rc = 0;
    for (int i = 0; i < l->n && rc == 0; i++) {
        const Entry *e = &l->v[i];
        for (size_t at = 0; at < e->count && rc == 0; at += CHUNK) {
            size_t n = e->count - at < CHUNK ? e->count - at : CHUNK;
            bk_download(tensor_backend(e->tensor), host, e->tensor->data + at, n * sizeof *host);
            for (size_t k = 0; k < n; k++) put_f32_le(buf + 4 * k, host[k]);
            rc = write_all(f, buf, 4 * n);
        }
    }
    free(host);
    free(buf);
    return rc;
}

/* Makes the rename durable; best effort (some filesystems refuse fsync on a directory). */
static void sync_parent_dir(const char *path)
{
    char *dir = xstrdup(path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, strlen(dir) + 1, ".");
    else if (slash == dir)
        slash[1] = '\0';
    else
        *slash = '\0';
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    free(dir);
}

int checkpoint_save(const char *path, const Net *net, const Optimizer *opt,
                    const TrainPosition *pos, Error *err)
{
    EntryList l = {0};
    if (collect_entries(net, opt, &l, err) != 0) {
        entries_free(&l);
        return -1;
    }
    cJSON *root = build_header(net, opt, pos, &l);
    char *json = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!json) {
        entries_free(&l);
        error_set(err, "%s: cannot format the checkpoint header", path);
        return -1;
    }
    size_t len = strlen(json);
    size_t padded = (len + 7) / 8 * 8;
    size_t tmp_len = strlen(path) + 5;
    char *tmp = xmalloc(tmp_len, "checkpoint path");
    snprintf(tmp, tmp_len, "%s.tmp", path);

    int rc = -1;
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        error_set(err, "%s: cannot create %s: %s", path, tmp, strerror(errno));
        goto done;
    }
    unsigned char head[8];
    put_u64_le(head, (uint64_t)padded);
    static const char spaces[8] = "        ";
    if (write_all(f, head, 8) != 0 || write_all(f, json, len) != 0 ||
        write_all(f, spaces, padded - len) != 0 || write_tensors(f, &l) != 0 || fflush(f) != 0) {
        error_set(err, "%s: write failed: %s", tmp, strerror(errno));
        fclose(f);
        unlink(tmp);
        goto done;
    }
    if (fault_should_fail(FAULT_FSYNC) || fsync(fileno(f)) != 0) {
        error_set(err, "%s: fsync failed: %s", tmp, strerror(errno));
        fclose(f);
        unlink(tmp);
        goto done;
    }
    if (fclose(f) != 0) {
        error_set(err, "%s: close failed: %s", tmp, strerror(errno));
        unlink(tmp);
        goto done;
    }
    if (fault_should_fail(FAULT_WRITE) || rename(tmp, path) != 0) {
        error_set(err, "%s: cannot rename %s to it: %s", path, tmp, strerror(errno));
        unlink(tmp);
        goto done;
    }
    sync_parent_dir(path);
    rc = 0;
done:
    free(tmp);
    cJSON_free(json);
    entries_free(&l);
    return rc;
}

/* ---- loading ---- */

/* A JSON number that is a non-negative integer exactly representable as a double. */
static int json_uint(const cJSON *x, uint64_t *out)
{
    if (!cJSON_IsNumber(x)) return -1;
    double d = x->valuedouble;
    if (!(d >= 0) || d > 9007199254740992.0 || d != floor(d)) return -1;
    *out = (uint64_t)d;
    return 0;
}

/* Validates one header entry (dtype, shape, offsets within a buffer of data_size
 * bytes and consistent with the shape) and returns its element count. */
static int check_header_entry(const char *path, const cJSON *t, uint64_t data_size,
                              uint64_t *count, uint64_t *begin, Error *err)
{
    const char *name = t->string;
    if (!cJSON_IsObject(t)) {
        error_set(err, "%s: header entry '%s' is not an object", path, name);
        return -1;
    }
    const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(t, "dtype");
    if (!cJSON_IsString(dtype) || strcmp(dtype->valuestring, "F32") != 0) {
        error_set(err, "%s: tensor '%s' has dtype %s, expected F32", path, name,
                  cJSON_IsString(dtype) ? dtype->valuestring : "(missing)");
        return -1;
    }
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(t, "shape");
    if (!cJSON_IsArray(shape)) {
        error_set(err, "%s: tensor '%s' has no shape", path, name);
        return -1;
    }
    uint64_t n = 1;
    const cJSON *d;
    cJSON_ArrayForEach(d, shape)
    {
        uint64_t v;
        if (json_uint(d, &v) != 0 || v > ((uint64_t)1 << 40) || (v && n > (((uint64_t)1 << 60) / v))) {
            error_set(err, "%s: tensor '%s' has an invalid shape", path, name);
            return -1;
        }
        n *= v;
    }
    const cJSON *offs = cJSON_GetObjectItemCaseSensitive(t, "data_offsets");
    uint64_t b, e;
    if (!cJSON_IsArray(offs) || cJSON_GetArraySize(offs) != 2 ||
        json_uint(cJSON_GetArrayItem(offs, 0), &b) != 0 ||
        json_uint(cJSON_GetArrayItem(offs, 1), &e) != 0) {
        error_set(err, "%s: tensor '%s' has invalid data_offsets", path, name);
        return -1;
    }
    if (b > e || e > data_size) {
        error_set(err, "%s: tensor '%s' lies outside the data (offsets %" PRIu64 "..%" PRIu64
                  ", %" PRIu64 " bytes of data; truncated file?)",
                  path, name, b, e, data_size);
        return -1;
    }
    if (e - b != 4 * n) {
        error_set(err, "%s: tensor '%s' has %" PRIu64 " bytes for %" PRIu64 " F32 values", path,
                  name, e - b, n);
        return -1;
    }
    *count = n;
    *begin = b;
    return 0;
}

static void shape_text(char *buf, size_t size, const cJSON *shape)
{
    size_t at = 0;
    at += (size_t)snprintf(buf + at, size - at, "[");
    const cJSON *d;
    cJSON_ArrayForEach(d, shape)
    {
        if (at >= size) break;
        at += (size_t)snprintf(buf + at, size - at, "%s%.0f", d == shape->child ? "" : ",",
                               d->valuedouble);
    }
    if (at < size) snprintf(buf + at, size - at, "]");
}

/* The header's shape is exactly the entry's, dimension by dimension. */
static bool same_shape(const Entry *e, const cJSON *shape)
{
    if (cJSON_GetArraySize(shape) != e->ndim) return false;
    for (int i = 0; i < e->ndim; i++)
        if (cJSON_GetArrayItem(shape, i)->valuedouble != (double)e->shape[i]) return false;
    return true;
}

static void entry_shape_text(char *buf, size_t size, const Entry *e)
{
    size_t at = (size_t)snprintf(buf, size, "[");
    for (int i = 0; i < e->ndim && at < size; i++)
        at += (size_t)snprintf(buf + at, size - at, "%s%" PRId64, i ? "," : "", e->shape[i]);
    if (at < size) snprintf(buf + at, size - at, "]");
}

static int parse_meta_long(const char *path, const cJSON *meta, const char *key, long long min,
                           long long max, long long *out, Error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(meta, key);
    if (!cJSON_IsString(v)) {
        error_set(err, "%s: metadata '%s' is missing", path, key);
        return -1;
    }
    char *end;
    errno = 0;
    long long x = strtoll(v->valuestring, &end, 10);
    if (errno || end == v->valuestring || *end || x < min || x > max) {
        error_set(err, "%s: metadata '%s' is not a valid number: '%s'", path, key, v->valuestring);
        return -1;
    }
    *out = x;
    return 0;
}

static const char *meta_string(const char *path, const cJSON *meta, const char *key, Error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(meta, key);
    if (!cJSON_IsString(v)) {
        error_set(err, "%s: metadata '%s' is missing", path, key);
        return NULL;
    }
    return v->valuestring;
}

/* buf: 4 * CHUNK bytes, then CHUNK reals of host staging. */
static int read_tensor(FILE *f, off_t at, Entry *e, unsigned char *buf)
{
    real *host = (real *)(buf + 4 * (size_t)CHUNK);
    if (fseeko(f, at, SEEK_SET) != 0) return -1;
    for (size_t done = 0; done < e->count; done += CHUNK) {
        size_t n = e->count - done < CHUNK ? e->count - done : CHUNK;
        if (fread(buf, 1, 4 * n, f) != 4 * n) return -1;
        for (size_t k = 0; k < n; k++) host[k] = get_f32_le(buf + 4 * k);
        bk_upload(tensor_backend(e->tensor), e->tensor->data + done, host, n * sizeof *host);
    }
    return 0;
}

/* A checkpoint being loaded; loader_free releases whatever a step left in it. */
typedef struct {
    const char *path;
    FILE *f;
    char *header;       /* the header's hlen bytes: JSON, then padding */
    uint64_t hlen, data_size;
    cJSON *root;        /* the parsed header */
    EntryList l;        /* the tensors of the net and optimizer, with their offsets in the file */
} Loader;

/* What __metadata__ says; the strings belong to the loader's root. */
typedef struct {
    const char *model, *optname;
    long long step, epoch, epoch_step, updates, hits;
    unsigned long long seed;
    double loss_sum;
    double first_loss; /* NAN where the file has none (saved before any step, or by an older bigbatch) */
} Metadata;

static void loader_free(Loader *ld)
{
    entries_free(&ld->l);
    cJSON_Delete(ld->root);
    free(ld->header);
    if (ld->f) fclose(ld->f);
}

/* The file, its header's length (checked against the file's size) and the header's bytes. */
static int read_header(Loader *ld, Error *err)
{
    const char *path = ld->path;
    ld->f = fopen(path, "rb");
    if (!ld->f) {
        error_set(err, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fileno(ld->f), &st) != 0) {
        error_set(err, "%s: cannot stat: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        error_set(err, "%s: not a regular file", path);
        return -1;
    }
    uint64_t file_size = (uint64_t)st.st_size;
    unsigned char head[8];
    if (file_size < 8 || fread(head, 1, 8, ld->f) != 8) {
        error_set(err, "%s: not a checkpoint (file too short for a safetensors header)", path);
        return -1;
    }
    ld->hlen = get_u64_le(head);
    if (ld->hlen < 2 || ld->hlen > CKPT_MAX_HEADER || ld->hlen > file_size - 8) {
        error_set(err, "%s: not a checkpoint or truncated (header length %" PRIu64
                  ", file size %" PRIu64 ")",
                  path, ld->hlen, file_size);
        return -1;
    }
    ld->header = xmalloc((size_t)ld->hlen, "checkpoint header");
    if (fread(ld->header, 1, (size_t)ld->hlen, ld->f) != ld->hlen) {
        error_set(err, "%s: cannot read the header: %s", path,
                  ferror(ld->f) ? strerror(errno) : "unexpected end of file");
        return -1;
    }
    ld->data_size = file_size - 8 - ld->hlen;
    return 0;
}

/* The header's JSON: one object, followed only by the padding. */
static int parse_header(Loader *ld, Error *err)
{
    const char *parse_end = NULL;
    ld->root = cJSON_ParseWithLengthOpts(ld->header, (size_t)ld->hlen, &parse_end, 0);
    if (ld->root && parse_end) {
        for (const char *c = parse_end; c < ld->header + ld->hlen; c++)
            if (*c != ' ' && *c != '\t' && *c != '\n' && *c != '\r' && *c != '\0') {
                cJSON_Delete(ld->root);
                ld->root = NULL;
                break;
            }
    }
    if (!ld->root || !cJSON_IsObject(ld->root)) {
        error_set(err, "%s: corrupt checkpoint header (invalid JSON)", ld->path);
        return -1;
    }
    return 0;
}

static int parse_meta_seed(const char *path, const cJSON *meta, unsigned long long *out, Error *err)
{
    const char *text = meta_string(path, meta, "seed", err);
    if (!text) return -1;
    char *end;
    errno = 0;
    unsigned long long seed = strtoull(text, &end, 10);
    if (errno || end == text || *end || text[0] == '-') {
        error_set(err, "%s: metadata 'seed' is not a valid number: '%s'", path, text);
        return -1;
    }
    *out = seed;
    return 0;
}

static int parse_meta_double(const char *path, const cJSON *meta, const char *key, double *out, Error *err)
{
    const char *text = meta_string(path, meta, key, err);
    if (!text) return -1;
    char *end;
    errno = 0;
    double x = strtod(text, &end);
    if (errno || end == text || *end || !isfinite(x) || x < 0) {
        error_set(err, "%s: metadata '%s' is not a finite number >= 0: '%s'", path, key, text);
        return -1;
    }
    *out = x;
    return 0;
}

/* __metadata__: the format, the model and optimizer it was saved with (they must be net's
 * and opt's), and the training position. */
static int read_metadata(const Loader *ld, const Net *net, const Optimizer *opt, Metadata *m, Error *err)
{
    const char *path = ld->path;
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(ld->root, "__metadata__");
    if (!cJSON_IsObject(meta)) {
        error_set(err, "%s: not a bigbatch checkpoint (no __metadata__)", path);
        return -1;
    }
    const char *format = meta_string(path, meta, "format", err);
    if (!format) return -1;
    if (strcmp(format, CKPT_FORMAT) != 0) {
        error_set(err, "%s: unsupported checkpoint format '%s' (expected '%s')", path, format,
                  CKPT_FORMAT);
        return -1;
    }
    m->model = meta_string(path, meta, "model", err);
    if (!m->model) return -1;
    if (strcmp(m->model, net->model) != 0) {
        error_set(err, "%s: checkpoint is for model '%s', not '%s'", path, m->model, net->model);
        return -1;
    }
    m->optname = meta_string(path, meta, "optimizer", err);
    if (!m->optname) return -1;
    if (opt && strcmp(m->optname, opt->cfg.name) != 0) {
        error_set(err, "%s: checkpoint was saved with optimizer '%s', not '%s'", path, m->optname,
                  opt->cfg.name);
        return -1;
    }
    if (parse_meta_long(path, meta, "step", 0, LONG_MAX, &m->step, err) != 0 ||
        parse_meta_long(path, meta, "epoch", 0, INT_MAX, &m->epoch, err) != 0 ||
        parse_meta_long(path, meta, "epoch_step", 0, LONG_MAX, &m->epoch_step, err) != 0 ||
        parse_meta_long(path, meta, "epoch_hits", 0, LONG_MAX, &m->hits, err) != 0 ||
        parse_meta_long(path, meta, "optimizer_updates", 0, LONG_MAX, &m->updates, err) != 0 ||
        parse_meta_seed(path, meta, &m->seed, err) != 0 ||
        parse_meta_double(path, meta, "epoch_loss_sum", &m->loss_sum, err) != 0)
        return -1;
    m->first_loss = NAN;
    if (cJSON_GetObjectItemCaseSensitive(meta, "first_loss"))
        return parse_meta_double(path, meta, "first_loss", &m->first_loss, err);
    return 0;
}

/* Where one header entry's bytes lie in the data. */
typedef struct {
    const char *name;
    uint64_t begin, end;
} Span;

static int span_cmp(const void *a, const void *b)
{
    const Span *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    return (x->end > y->end) - (x->end < y->end);
}

/* The spans, in file order, must cover the data exactly: a gap, an overlap or trailing bytes
 * mean a header length that is off or offsets edited by hand, whose values would be wrong. */
static int check_tiling(const char *path, Span *s, int n, uint64_t data_size, Error *err)
{
    qsort(s, (size_t)n, sizeof *s, span_cmp);
    uint64_t at = 0;
    for (int i = 0; i < n; i++) {
        if (s[i].begin != at) {
            error_set(err, "%s: tensor '%s' starts at byte %" PRIu64 " of the data, not at %" PRIu64
                      " where the previous one ends (%s; tensors must tile the data)",
                      path, s[i].name, s[i].begin, at, s[i].begin < at ? "overlap" : "gap");
            return -1;
        }
        at = s[i].end;
    }
    if (at != data_size) {
        error_set(err, "%s: %" PRIu64 " bytes after the last tensor (the data is %" PRIu64
                  " bytes, the tensors %" PRIu64 "; wrong header length or trailing bytes?)",
                  path, data_size - at, data_size, at);
        return -1;
    }
    return 0;
}

/* The header's entries (each already checked) tile the data. */
static int check_layout(const Loader *ld, Error *err)
{
    int n = cJSON_GetArraySize(ld->root), k = 0, rc = 0;
    Span *s = xmalloc(sizeof *s * (size_t)(n > 0 ? n : 1), "checkpoint spans");
    const cJSON *t;
    cJSON_ArrayForEach(t, ld->root)
    {
        if (!t->string || strcmp(t->string, "__metadata__") == 0) continue;
        uint64_t count;
        s[k].name = t->string;
        rc = check_header_entry(ld->path, t, ld->data_size, &count, &s[k].begin, err);
        if (rc != 0) break;
        s[k].end = s[k].begin + 4 * count;
        k++;
    }
    if (rc == 0) rc = check_tiling(ld->path, s, k, ld->data_size, err);
    free(s);
    return rc;
}

/* Every entry of the header must be a valid F32 tensor within the data, and every tensor
 * of the net and optimizer must be present with the right size; notes where each lies. */
static int check_entries(Loader *ld, const Net *net, const Optimizer *opt, Error *err)
{
    const char *path = ld->path;
    const cJSON *t;
    uint64_t count, begin;
    cJSON_ArrayForEach(t, ld->root)
    {
        if (!t->string) continue;
        if (strcmp(t->string, "__metadata__") == 0) continue;
        if (check_header_entry(path, t, ld->data_size, &count, &begin, err) != 0) return -1;
    }
    if (collect_entries(net, opt, &ld->l, err) != 0) return -1;
    for (int i = 0; i < ld->l.n; i++) {
        Entry *e = &ld->l.v[i];
        t = cJSON_GetObjectItemCaseSensitive(ld->root, e->name);
        if (!t) {
            error_set(err, "%s: tensor '%s' is missing from the checkpoint", path, e->name);
            return -1;
        }
        if (check_header_entry(path, t, ld->data_size, &count, &begin, err) != 0) return -1;
        if (!same_shape(e, cJSON_GetObjectItemCaseSensitive(t, "shape"))) {
            char have[96], want[96];
            shape_text(have, sizeof have, cJSON_GetObjectItemCaseSensitive(t, "shape"));
            entry_shape_text(want, sizeof want, e);
            error_set(err, "%s: tensor '%s' has shape %s (%" PRIu64 " values), the %s model needs %s", path, e->name,
                      have, count, net->model, want);
            return -1;
        }
        e->begin = begin;
    }
    return check_layout(ld, err);
}

/* Every entry's values from the file into its tensor. */
static int load_values(const Loader *ld, Error *err)
{
    /* 4 * CHUNK bytes, then CHUNK reals (read_tensor's layout) */
    unsigned char *buf = xmalloc((4 + sizeof(real)) * (size_t)CHUNK, "checkpoint read buffer");
    int rc = 0;
    for (int i = 0; i < ld->l.n && rc == 0; i++) {
        Entry *e = &ld->l.v[i];
        if (read_tensor(ld->f, (off_t)(8 + ld->hlen + e->begin), e, buf) != 0) {
            error_set(err, "%s: cannot read tensor '%s': %s", ld->path, e->name,
                      ferror(ld->f) ? strerror(errno) : "unexpected end of file");
            rc = -1;
        }
    }
    free(buf);
    return rc;
}

static void set_position(const Metadata *m, Optimizer *opt, TrainPosition *pos)
{
    if (opt) opt->updates = (long)m->updates;
    if (!pos) return;
    pos->step = (long)m->step;
    pos->epoch = (int)m->epoch;
    pos->epoch_step = (long)m->epoch_step;
    pos->epoch_loss_sum = m->loss_sum;
    pos->epoch_hits = (long)m->hits;
    pos->first_loss = m->first_loss;
    pos->seed = m->seed;
    snprintf(pos->model, sizeof pos->model, "%s", m->model);
    snprintf(pos->optimizer, sizeof pos->optimizer, "%s", m->optname);
}

int checkpoint_load(const char *path, Net *net, Optimizer *opt, TrainPosition *pos, Error *err)
{
    Loader ld = {.path = path};
    Metadata m;
    int rc = -1;
    if (read_header(&ld, err) != 0 || parse_header(&ld, err) != 0 ||
        read_metadata(&ld, net, opt, &m, err) != 0 || check_entries(&ld, net, opt, err) != 0)
        goto done;
    /* Everything checks out: only now overwrite the net and optimizer. */
    if (load_values(&ld, err) != 0) goto done;
    set_position(&m, opt, pos);
    rc = 0;
done:
    loader_free(&ld);
    return rc;
}

int checkpoint_describe(const char *path, char *model, size_t model_len, char *optname, size_t opt_len, Error *err)
{
    Loader ld = {.path = path};
    int rc = -1;
    if (read_header(&ld, err) == 0 && parse_header(&ld, err) == 0) {
        const cJSON *meta = cJSON_GetObjectItemCaseSensitive(ld.root, "__metadata__");
        const char *m = cJSON_IsObject(meta) ? meta_string(path, meta, "model", err) : NULL;
        const char *o = m ? meta_string(path, meta, "optimizer", err) : NULL;
        if (!cJSON_IsObject(meta)) error_set(err, "%s: not a bigbatch checkpoint (no __metadata__)", path);
        if (o) {
            snprintf(model, model_len, "%s", m);
            snprintf(optname, opt_len, "%s", o);
            rc = 0;
        }
    }
    loader_free(&ld);
    return rc;
}

int checkpoint_position(const char *path, TrainPosition *pos, Error *err)
{
    Loader ld = {.path = path};
    int rc = -1;
    long long step, epoch, epoch_step;
    if (read_header(&ld, err) == 0 && parse_header(&ld, err) == 0 && check_layout(&ld, err) == 0) {
        const cJSON *meta = cJSON_GetObjectItemCaseSensitive(ld.root, "__metadata__");
        if (!cJSON_IsObject(meta))
            error_set(err, "%s: not a bigbatch checkpoint (no __metadata__)", path);
        else if (parse_meta_long(path, meta, "step", 0, LONG_MAX, &step, err) == 0 &&
                 parse_meta_long(path, meta, "epoch", 0, INT_MAX, &epoch, err) == 0 &&
                 parse_meta_long(path, meta, "epoch_step", 0, LONG_MAX, &epoch_step, err) == 0) {
            memset(pos, 0, sizeof *pos);
            pos->step = (long)step;
            pos->epoch = (int)epoch;
            pos->epoch_step = (long)epoch_step;
            rc = 0;
        }
    }
    loader_free(&ld);
    return rc;
}

/* The first non-finite value of e's tensor, or -1; host stages CHUNK values. */
static long long first_non_finite(const Entry *e, real *host)
{
    for (size_t at = 0; at < e->count; at += CHUNK) {
        size_t n = e->count - at < CHUNK ? e->count - at : CHUNK;
        bk_download(tensor_backend(e->tensor), host, e->tensor->data + at, n * sizeof *host);
        for (size_t k = 0; k < n; k++)
            if (!isfinite(host[k])) return (long long)(at + k);
    }
    return -1;
}

int checkpoint_check_finite(const char *path, const Net *net, const Optimizer *opt, Error *err)
{
    EntryList l = {0};
    int rc = collect_entries(net, opt, &l, err);
    real *host = xmalloc(sizeof *host * CHUNK, "checkpoint check buffer");
    for (int i = 0; i < l.n && rc == 0; i++) {
        long long at = first_non_finite(&l.v[i], host);
        if (at >= 0) {
            error_set(err, "%s: tensor '%s' holds a NaN or an infinity (value %lld); a diverged run's "
                      "checkpoint cannot be resumed", path, l.v[i].name, at);
            rc = -1;
        }
    }
    free(host);
    entries_free(&l);
    return rc;
}
