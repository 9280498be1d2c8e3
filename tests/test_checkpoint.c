/* Checkpoints (engine/train/checkpoint.c): bit-exact round trips of parameters, buffers,
 * optimizer slots and the training position; the safetensors layout and PyTorch
 * shapes; and every way a load or save must fail cleanly. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <ftw.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../engine/train/checkpoint.h"
#include "../engine/net/models.h"

static char dir[64];
static Backend *bk;

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    chmod(p, 0700);
    return remove(p);
}

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/bb_ckpt_XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    bk = backend_create(1);
}

static void teardown(void)
{
    backend_destroy(bk);
    chmod(dir, 0700);
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

TestSuite(checkpoint, .init = setup, .fini = teardown);

static char *in_dir(const char *name)
{
    static char buf[4][256];
    static int k;
    char *p = buf[k++ % 4];
    snprintf(p, 256, "%s/%s", dir, name);
    return p;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* A model with every kind of state set to values that depend on `seed`. */
typedef struct {
    Net *net;
    Optimizer *opt;
} Model;

static Model make(const char *name, int classes, uint64_t seed)
{
    Error err = {""};
    Model m;
    m.net = model_build(name, bk, classes, seed, &err);
    cr_assert_not_null(m.net, "%s", err.msg);
    OptConfig cfg;
    opt_config_defaults(&cfg);
    cfg.momentum = 0.9;
    m.opt = optimizer_create(&cfg, m.net, &err);
    cr_assert_not_null(m.opt, "%s", err.msg);
    cr_assert_eq(m.opt->n_slots, 1);
    for (int p = 0; p < m.net->n_params; p++) {
        Tensor *t = optimizer_slot(m.opt, p, 0);
        real *v = tensor_to_host(t);
        for (size_t i = 0; i < tensor_count(t); i++)
            v[i] = (real)((double)seed * 1e-3 + p * 0.37 + (double)i * 1.0e-4 - 0.5);
        tensor_upload(t, v);
        free(v);
    }
    for (int b = 0; b < m.net->n_buffers; b++) {
        Tensor *t = &m.net->buffers[b].value;
        real *v = tensor_to_host(t);
        for (size_t i = 0; i < tensor_count(t); i++)
            v[i] = (real)((double)seed * 1e-2 + b * 1.3 + (double)i * 0.01 + 0.25);
        tensor_upload(t, v);
        free(v);
    }
    m.opt->updates = (long)seed * 10 + 7;
    return m;
}

static void drop(Model *m)
{
    optimizer_destroy(m->opt);
    net_destroy(m->net);
}

static TrainPosition position(void)
{
    TrainPosition pos;
    memset(&pos, 0, sizeof pos);
    pos.step = 1234;
    pos.epoch = 3;
    pos.epoch_step = 17;
    pos.seed = 18446744073709551557ULL; /* above 2^63: must survive as text */
    return pos;
}

/* 1 when x and y hold the same bits (both downloaded). */
static int same_tensor(const Tensor *x, const Tensor *y)
{
    if (tensor_count(x) != tensor_count(y)) return 0;
    real *a = tensor_to_host(x), *b = tensor_to_host(y);
    int same = memcmp(a, b, tensor_count(x) * sizeof(real)) == 0;
    free(a);
    free(b);
    return same;
}

/* 1 when every parameter, buffer and slot of a and b holds the same bits. */
static int same_state(const Model *a, const Model *b)
{
    if (a->net->n_weights != b->net->n_weights) return 0;
    if (!same_tensor(&a->net->param_block, &b->net->param_block)) return 0;
    for (int i = 0; i < a->net->n_buffers; i++)
        if (!same_tensor(&a->net->buffers[i].value, &b->net->buffers[i].value)) return 0;
    for (int p = 0; p < a->net->n_params; p++)
        if (!same_tensor(optimizer_slot(a->opt, p, 0), optimizer_slot(b->opt, p, 0))) return 0;
    return 1;
}

static void round_trip(const char *model)
{
    Model a = make(model, 0, 1);
    TrainPosition pos = position();
    Error err = {""};
    const char *path = in_dir("rt.safetensors");
    cr_assert_eq(checkpoint_save(path, a.net, a.opt, &pos, &err), 0, "%s", err.msg);

    Model b = make(model, 0, 2);
    b.opt->updates = 0;
    cr_assert_not(same_state(&a, &b), "nets built with other seeds must differ before loading");
    TrainPosition got;
    memset(&got, 0, sizeof got);
    cr_assert_eq(checkpoint_load(path, b.net, b.opt, &got, &err), 0, "%s", err.msg);
    cr_assert(same_state(&a, &b), "%s: loaded state differs from the saved one", model);
    cr_assert_eq(b.opt->updates, a.opt->updates);
    cr_assert_eq(got.step, pos.step);
    cr_assert_eq(got.epoch, pos.epoch);
    cr_assert_eq(got.epoch_step, pos.epoch_step);
    cr_assert_eq(got.seed, pos.seed);
    cr_assert_str_eq(got.model, model);
    cr_assert_str_eq(got.optimizer, "sgd");
    drop(&a);
    drop(&b);
}

Test(checkpoint, round_trip_lenet) { round_trip("lenet"); }
Test(checkpoint, round_trip_resnet8) { round_trip("resnet8"); }

/* ---- file helpers ---- */

static unsigned char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)n + 1);
    cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return buf;
}

static void spit(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(data, 1, size, f), size);
    cr_assert_eq(fclose(f), 0);
}

static uint64_t header_len(const unsigned char *b)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)b[i] << (8 * i);
    return v;
}

static cJSON *read_header(const char *path, size_t *data_size)
{
    size_t size;
    unsigned char *buf = slurp(path, &size);
    uint64_t n = header_len(buf);
    cr_assert_leq(8 + n, size);
    cJSON *root = cJSON_ParseWithLength((const char *)buf + 8, (size_t)n);
    cr_assert_not_null(root, "header of %s is not JSON", path);
    if (data_size) *data_size = size - 8 - (size_t)n;
    free(buf);
    return root;
}

/* Rewrites path's JSON header through edit(), keeping the tensor data. */
static void rewrite_header(const char *path, void (*edit)(cJSON *root, const void *arg),
                           const void *arg)
{
    size_t size;
    unsigned char *buf = slurp(path, &size);
    uint64_t n = header_len(buf);
    cJSON *root = cJSON_ParseWithLength((const char *)buf + 8, (size_t)n);
    cr_assert_not_null(root);
    edit(root, arg);
    char *json = cJSON_PrintUnformatted(root);
    size_t len = strlen(json), padded = (len + 7) / 8 * 8;
    size_t out_size = 8 + padded + (size - 8 - n);
    unsigned char *out = malloc(out_size);
    for (int i = 0; i < 8; i++) out[i] = (unsigned char)((uint64_t)padded >> (8 * i));
    memcpy(out + 8, json, len);
    memset(out + 8 + len, ' ', padded - len);
    memcpy(out + 8 + padded, buf + 8 + n, size - 8 - n);
    spit(path, out, out_size);
    free(out);
    cJSON_free(json);
    cJSON_Delete(root);
    free(buf);
}

static void save_model(const Model *m, const char *path)
{
    TrainPosition pos = position();
    Error err = {""};
    cr_assert_eq(checkpoint_save(path, m->net, m->opt, &pos, &err), 0, "%s", err.msg);
}

/* Loading path into a fresh net of the model must fail; returns the message and
 * checks that the failed load left the net untouched. */
static void expect_load_error(const char *model, int classes, const char *path, char *msg, size_t size)
{
    Model b = make(model, classes, 5);
    Model ref = make(model, classes, 5);
    TrainPosition pos;
    memset(&pos, 0, sizeof pos);
    Error err = {""};
    cr_assert_neq(checkpoint_load(path, b.net, b.opt, &pos, &err), 0, "loading %s must fail", path);
    cr_assert_neq(err.msg[0], '\0', "a failed load must set the error");
    cr_assert(strstr(err.msg, path), "the error must name the file: %s", err.msg);
    cr_assert(same_state(&b, &ref), "a failed load must not modify the net: %s", err.msg);
    cr_assert_eq(b.opt->updates, ref.opt->updates);
    snprintf(msg, size, "%s", err.msg);
    drop(&b);
    drop(&ref);
}

static void shape_is(const cJSON *root, const char *name, int ndim, const int *dims)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(root, name);
    cr_assert_not_null(t, "no tensor %s in the header", name);
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(t, "shape");
    cr_assert_eq(cJSON_GetArraySize(shape), ndim, "%s: wrong rank", name);
    for (int i = 0; i < ndim; i++)
        cr_assert_eq(cJSON_GetArrayItem(shape, i)->valueint, dims[i], "%s: dim %d", name, i);
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(t, "dtype")->valuestring, "F32");
}

static const char *meta(const cJSON *root, const char *key)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "__metadata__");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, key);
    cr_assert(cJSON_IsString(v), "metadata %s missing or not a string", key);
    return v->valuestring;
}

/* ---- layout ---- */

Test(checkpoint, safetensors_layout_and_pytorch_shapes)
{
    Model m = make("lenet", 0, 3);
    const char *path = in_dir("lenet.safetensors");
    save_model(&m, path);

    size_t size;
    unsigned char *buf = slurp(path, &size);
    uint64_t n = header_len(buf);
    cr_assert_eq(n % 8, 0, "header length %llu must be a multiple of 8", (unsigned long long)n);
    cr_assert_eq(buf[8], '{');
    size_t data_size;
    cJSON *root = read_header(path, &data_size);

    cr_assert_str_eq(meta(root, "format"), "bigbatch-checkpoint-1");
    cr_assert_str_eq(meta(root, "model"), "lenet");
    cr_assert_str_eq(meta(root, "optimizer"), "sgd");
    cr_assert_str_eq(meta(root, "step"), "1234");
    cr_assert_str_eq(meta(root, "epoch"), "3");
    cr_assert_str_eq(meta(root, "epoch_step"), "17");
    cr_assert_str_eq(meta(root, "seed"), "18446744073709551557");
    cr_assert_str_eq(meta(root, "optimizer_updates"), "37");

    shape_is(root, "conv1.weight", 4, (int[]){6, 1, 5, 5});
    shape_is(root, "conv1.bias", 1, (int[]){6});
    shape_is(root, "conv2.weight", 4, (int[]){16, 6, 5, 5});
    shape_is(root, "fc1.weight", 2, (int[]){120, 400});
    shape_is(root, "fc1.bias", 1, (int[]){120});
    shape_is(root, "fc3.weight", 2, (int[]){10, 84});
    shape_is(root, "optimizer.fc1.weight.momentum_buffer", 2, (int[]){120, 400});
    shape_is(root, "optimizer.conv2.bias.momentum_buffer", 1, (int[]){16});

    /* Offsets tile the data buffer exactly; every tensor is 4 bytes a value. */
    int entries = 0;
    size_t covered = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, root)
    {
        if (!strcmp(t->string, "__metadata__")) continue;
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(t, "data_offsets");
        double b = cJSON_GetArrayItem(o, 0)->valuedouble, e = cJSON_GetArrayItem(o, 1)->valuedouble;
        cr_assert_leq(e, (double)data_size);
        covered += (size_t)(e - b);
        entries++;
    }
    cr_assert_eq(entries, 2 * m.net->n_params + m.net->n_buffers);
    cr_assert_eq(covered, data_size);

    /* The bytes of fc1.weight are its values as little-endian F32. */
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(root, "fc1.weight"), "data_offsets");
    size_t begin = (size_t)cJSON_GetArrayItem(o, 0)->valuedouble;
    const Param *p = &m.net->params[net_find_param(m.net, "fc1.weight")];
    real *value = tensor_to_host(&p->value);
    for (size_t i = 0; i < tensor_count(&p->value); i += 997) {
        const unsigned char *q = buf + 8 + n + begin + 4 * i;
        uint32_t u = (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
        float f;
        memcpy(&f, &u, 4);
        cr_assert_eq(f, (float)value[i], "fc1.weight[%zu]", i);
    }
    free(value);
    cJSON_Delete(root);
    free(buf);
    drop(&m);
}

Test(checkpoint, resnet8_buffer_and_projection_shapes)
{
    Model m = make("resnet8", 0, 3);
    const char *path = in_dir("r8.safetensors");
    save_model(&m, path);
    cJSON *root = read_header(path, NULL);
    shape_is(root, "conv1.weight", 4, (int[]){16, 3, 3, 3});
    shape_is(root, "bn1.weight", 1, (int[]){16});
    shape_is(root, "bn1.running_mean", 1, (int[]){16});
    shape_is(root, "layer3.0.bn2.running_var", 1, (int[]){64});
    shape_is(root, "layer2.0.downsample.0.weight", 4, (int[]){32, 16, 1, 1});
    shape_is(root, "layer2.0.downsample.1.bias", 1, (int[]){32});
    shape_is(root, "fc.weight", 2, (int[]){10, 64});
    shape_is(root, "optimizer.layer1.0.conv2.weight.momentum_buffer", 4, (int[]){16, 16, 3, 3});
    cr_assert_str_eq(meta(root, "model"), "resnet8");
    cJSON_Delete(root);
    drop(&m);
}

Test(checkpoint, no_tmp_file_after_save)
{
    Model m = make("lenet", 0, 1);
    const char *path = in_dir("a.safetensors");
    save_model(&m, path);
    cr_assert(exists(path));
    cr_assert_not(exists(in_dir("a.safetensors.tmp")), "the .tmp file must be renamed away");
    /* Overwriting an existing checkpoint works the same way. */
    save_model(&m, path);
    cr_assert(exists(path));
    cr_assert_not(exists(in_dir("a.safetensors.tmp")));
    drop(&m);
}

/* ---- load errors ---- */

Test(checkpoint, truncated_file_is_an_error)
{
    Model m = make("lenet", 0, 1);
    const char *path = in_dir("t.safetensors");
    save_model(&m, path);
    size_t size;
    unsigned char *buf = slurp(path, &size);
    size_t n = (size_t)header_len(buf);
    const size_t cuts[] = {0, 4, 8, 8 + n / 2, 8 + n, 8 + n + 100, size - 1};
    char msg[512];
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        spit(path, buf, cuts[i]);
        expect_load_error("lenet", 0, path, msg, sizeof msg);
    }
    spit(path, buf, size); /* the intact file still loads */
    Model b = make("lenet", 0, 2);
    Error err = {""};
    cr_assert_eq(checkpoint_load(path, b.net, b.opt, NULL, &err), 0, "%s", err.msg);
    free(buf);
    drop(&b);
    drop(&m);
}

Test(checkpoint, missing_file_is_an_error)
{
    char msg[512];
    expect_load_error("lenet", 0, in_dir("nope.safetensors"), msg, sizeof msg);
}

Test(checkpoint, wrong_model_names_both)
{
    Model m = make("lenet", 0, 1);
    const char *path = in_dir("lenet.safetensors");
    save_model(&m, path);
    char msg[512];
    expect_load_error("resnet8", 0, path, msg, sizeof msg);
    cr_assert(strstr(msg, "checkpoint is for model 'lenet', not 'resnet8'"), "%s", msg);
    drop(&m);
}

Test(checkpoint, corrupt_header_json_is_an_error)
{
    Model m = make("lenet", 0, 1);
    const char *path = in_dir("c.safetensors");
    save_model(&m, path);
    size_t size;
    unsigned char *buf = slurp(path, &size);
    size_t n = (size_t)header_len(buf);
    char msg[512];
    /* A broken colon in the middle of the header. */
    unsigned char *colon = memchr(buf + 8 + n / 2, ':', n / 2);
    cr_assert_not_null(colon);
    *colon = ';';
    spit(path, buf, size);
    expect_load_error("lenet", 0, path, msg, sizeof msg);
    cr_assert(strstr(msg, "JSON"), "%s", msg);
    *colon = ':';
    /* The closing brace replaced by padding: an unterminated object. */
    unsigned char *close = buf + 8 + n - 1;
    while (*close == ' ') close--;
    cr_assert_eq(*close, '}');
    *close = ' ';
    spit(path, buf, size);
    expect_load_error("lenet", 0, path, msg, sizeof msg);
    cr_assert(strstr(msg, "JSON"), "%s", msg);
    *close = '}';
    /* Garbage after the object. */
    close[1] = 'x';
    spit(path, buf, size);
    expect_load_error("lenet", 0, path, msg, sizeof msg);
    free(buf);
    drop(&m);
}

static void delete_item(cJSON *root, const void *name)
{
    cr_assert_not_null(cJSON_GetObjectItemCaseSensitive(root, name), "no %s to delete", (const char *)name);
    cJSON_DeleteItemFromObjectCaseSensitive(root, name);
}

static void missing(const char *model, const char *name)
{
    Model m = make(model, 0, 1);
    const char *path = in_dir("m.safetensors");
    save_model(&m, path);
    rewrite_header(path, delete_item, name);
    char msg[512], quoted[160];
    expect_load_error(model, 0, path, msg, sizeof msg);
    snprintf(quoted, sizeof quoted, "'%s'", name);
    cr_assert(strstr(msg, quoted), "the error must name %s: %s", name, msg);
    cr_assert(strstr(msg, "missing"), "%s", msg);
    drop(&m);
}

Test(checkpoint, missing_parameter_is_named) { missing("lenet", "conv2.weight"); }
Test(checkpoint, missing_buffer_is_named) { missing("resnet8", "layer1.0.bn2.running_var"); }
Test(checkpoint, missing_slot_is_named) { missing("lenet", "optimizer.fc3.bias.momentum_buffer"); }

Test(checkpoint, missing_metadata_is_an_error)
{
    Model m = make("lenet", 0, 1);
    const char *path = in_dir("m.safetensors");
    save_model(&m, path);
    rewrite_header(path, delete_item, "__metadata__");
    char msg[512];
    expect_load_error("lenet", 0, path, msg, sizeof msg);
    drop(&m);
}

Test(checkpoint, size_mismatch_is_named)
{
    Model m = make("lenet", 10, 1);
    const char *path = in_dir("s.safetensors");
    save_model(&m, path);
    char msg[512];
    expect_load_error("lenet", 7, path, msg, sizeof msg);
    cr_assert(strstr(msg, "'fc3.weight'"), "%s", msg);
    drop(&m);
}

static void set_dtype(cJSON *root, const void *name)
{
    cJSON *t = cJSON_GetObjectItemCaseSensitive(root, name);
    cr_assert_not_null(t);
    cJSON_ReplaceItemInObjectCaseSensitive(t, "dtype", cJSON_CreateString("F16"));
}

Test(checkpoint, non_f32_dtype_is_an_error)
{
    Model m = make("lenet", 0, 1);
    const char *path = in_dir("d.safetensors");
    save_model(&m, path);
    rewrite_header(path, set_dtype, "fc2.bias");
    char msg[512];
    expect_load_error("lenet", 0, path, msg, sizeof msg);
    cr_assert(strstr(msg, "'fc2.bias'") && strstr(msg, "F16"), "%s", msg);
    drop(&m);
}

/* conv1.weight [6,1,5,5] written as [6,25,1,1]: as many values, another shape */
static void reshape_conv1(cJSON *root, const void *unused)
{
    (void)unused;
    cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "conv1.weight");
    cr_assert_not_null(t);
    const int dims[4] = {6, 25, 1, 1};
    cJSON_ReplaceItemInObjectCaseSensitive(t, "shape", cJSON_CreateIntArray(dims, 4));
}

Test(checkpoint, same_count_other_shape_is_an_error)
{
    Model m = make("lenet", 0, 1);
    const char *path = in_dir("r.safetensors");
    save_model(&m, path);
    rewrite_header(path, reshape_conv1, NULL);
    char msg[512];
    expect_load_error("lenet", 0, path, msg, sizeof msg);
    cr_assert(strstr(msg, "'conv1.weight' has shape [6,25,1,1] (150 values), the lenet model needs [6,1,5,5]"), "%s",
              msg);
    drop(&m);
}

static void set_loss_sum(cJSON *root, const void *value)
{
    cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "__metadata__");
    cr_assert_not_null(m);
    cJSON_ReplaceItemInObjectCaseSensitive(m, "epoch_loss_sum", cJSON_CreateString(value));
}

Test(checkpoint, loss_sum_not_finite_is_an_error)
{
    Model m = make("lenet", 0, 1);
    const char *path = in_dir("l.safetensors");
    const char *bad[] = {"nan", "inf", "-1", "1e999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        save_model(&m, path);
        rewrite_header(path, set_loss_sum, bad[i]);
        char msg[512];
        expect_load_error("lenet", 0, path, msg, sizeof msg);
        cr_assert(strstr(msg, "metadata 'epoch_loss_sum' is not a finite number >= 0"), "%s: %s", bad[i], msg);
    }
    drop(&m);
}

static void shift_offsets(cJSON *root, const void *name)
{
    cJSON *o = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, name), "data_offsets");
    cr_assert_not_null(o);
    double b = cJSON_GetArrayItem(o, 0)->valuedouble, e = cJSON_GetArrayItem(o, 1)->valuedouble;
    cJSON_ReplaceItemInArray(o, 0, cJSON_CreateNumber(b + 1e9));
    cJSON_ReplaceItemInArray(o, 1, cJSON_CreateNumber(e + 1e9));
}

static void shrink_offsets(cJSON *root, const void *name)
{
    cJSON *o = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, name), "data_offsets");
    cr_assert_not_null(o);
    double e = cJSON_GetArrayItem(o, 1)->valuedouble;
    cJSON_ReplaceItemInArray(o, 1, cJSON_CreateNumber(e - 4));
}

Test(checkpoint, offsets_outside_data_or_shape_are_errors)
{
    Model m = make("lenet", 0, 1);
    const char *path = in_dir("o.safetensors");
    char msg[512];
    save_model(&m, path);
    rewrite_header(path, shift_offsets, "conv1.bias");
    expect_load_error("lenet", 0, path, msg, sizeof msg);
    cr_assert(strstr(msg, "'conv1.bias'"), "%s", msg);
    save_model(&m, path);
    rewrite_header(path, shrink_offsets, "conv1.bias");
    expect_load_error("lenet", 0, path, msg, sizeof msg);
    cr_assert(strstr(msg, "'conv1.bias'"), "%s", msg);
    drop(&m);
}

/* name's data_offsets become other's (same size): two tensors on the same bytes, or added
 * as a new entry when name is not in the header. */
static void alias_offsets(cJSON *root, const void *names)
{
    const char *const *n = names;
    cJSON *src = cJSON_GetObjectItemCaseSensitive(root, n[1]);
    cr_assert_not_null(src);
    cJSON *dst = cJSON_GetObjectItemCaseSensitive(root, n[0]);
    if (!dst) {
        cJSON_AddItemToObject(root, n[0], cJSON_Duplicate(src, 1));
        return;
    }
    cJSON_ReplaceItemInObjectCaseSensitive(dst, "data_offsets",
                                           cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(src, "data_offsets"), 1));
}

/* Tensors must tile the data exactly: an overlap or the gap it leaves is refused. */
Test(checkpoint, overlapping_tensors_are_errors)
{
    Model m = make("lenet", 0, 1);
    const char *path = in_dir("a.safetensors");
    char msg[512];
    const char *same[2] = {"optimizer.conv1.bias.momentum_buffer", "conv1.bias"}; /* 6 values each */
    save_model(&m, path);
    rewrite_header(path, alias_offsets, same);
    expect_load_error("lenet", 0, path, msg, sizeof msg);
    cr_assert(strstr(msg, "tile"), "%s", msg);
    const char *extra[2] = {"extra", "conv1.bias"};
    save_model(&m, path);
    rewrite_header(path, alias_offsets, extra);
    expect_load_error("lenet", 0, path, msg, sizeof msg);
    cr_assert(strstr(msg, "overlap"), "%s", msg);
    drop(&m);
}

/* Bytes after the last tensor, and a header length 1-4 bytes short (the data seen from a few
 * bytes early: the same values, shifted), are refused. */
Test(checkpoint, trailing_bytes_and_short_header_length_are_errors)
{
    Model m = make("lenet", 0, 1);
    const char *path = in_dir("t.safetensors");
    save_model(&m, path);
    size_t size;
    unsigned char *buf = slurp(path, &size);
    unsigned char *longer = calloc(size + 100, 1);
    memcpy(longer, buf, size);
    char msg[512];
    spit(path, longer, size + 100);
    expect_load_error("lenet", 0, path, msg, sizeof msg);
    cr_assert(strstr(msg, "100 bytes after the last tensor"), "%s", msg);
    uint64_t n = header_len(buf);
    for (uint64_t k = 1; k <= 4; k++) {
        for (int i = 0; i < 8; i++) longer[i] = (unsigned char)((n - k) >> (8 * i));
        spit(path, longer, size);
        expect_load_error("lenet", 0, path, msg, sizeof msg);
    }
    free(longer);
    free(buf);
    drop(&m);
}

/* A resume must not go on from NaN or infinite weights; the message names file and tensor. */
Test(checkpoint, non_finite_values_are_named)
{
    Model m = make("lenet", 0, 1);
    const char *path = in_dir("f.safetensors");
    Error err = {""};
    cr_assert_eq(checkpoint_check_finite(path, m.net, m.opt, &err), 0, "%s", err.msg);
    Tensor *t = optimizer_slot(m.opt, 1, 0);
    real *v = tensor_to_host(t);
    v[2] = (real)INFINITY;
    tensor_upload(t, v);
    free(v);
    cr_assert_neq(checkpoint_check_finite(path, m.net, m.opt, &err), 0);
    char want[400];
    snprintf(want, sizeof want, "%s: tensor 'optimizer.%s.momentum_buffer' holds a NaN or an infinity (value 2)",
             path, m.net->params[1].name);
    cr_assert(strstr(err.msg, want), "%s", err.msg);
    drop(&m);
}

/* ---- save errors ---- */

static void expect_save_error(const char *path)
{
    Model m = make("lenet", 0, 1);
    TrainPosition pos = position();
    Error err = {""};
    cr_assert_neq(checkpoint_save(path, m.net, m.opt, &pos, &err), 0, "saving to %s must fail", path);
    cr_assert(strstr(err.msg, path), "the error must name the path: %s", err.msg);
    char tmp[300];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    cr_assert_not(exists(tmp), "%s must not be left behind", tmp);
    drop(&m);
}

Test(checkpoint, save_into_missing_directory_fails)
{
    const char *path = in_dir("no/such/dir/x.safetensors");
    expect_save_error(path);
    cr_assert_not(exists(path));
}

Test(checkpoint, save_below_a_regular_file_fails)
{
    spit(in_dir("file"), "x", 1);
    const char *path = in_dir("file/x.safetensors");
    expect_save_error(path);
    cr_assert_not(exists(path));
}

Test(checkpoint, save_into_read_only_directory_fails)
{
    if (geteuid() == 0) cr_skip_test("root ignores directory permissions");
    const char *ro = in_dir("ro");
    cr_assert_eq(mkdir(ro, 0555), 0);
    const char *path = in_dir("ro/x.safetensors");
    expect_save_error(path);
    cr_assert_not(exists(path));
}

Test(checkpoint, failed_rename_leaves_no_tmp)
{
    /* The data is written, but a non-empty directory cannot be replaced. */
    const char *path = in_dir("taken");
    cr_assert_eq(mkdir(path, 0755), 0);
    spit(in_dir("taken/keep"), "x", 1);
    expect_save_error(path);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert(S_ISDIR(st.st_mode));
    cr_assert(exists(in_dir("taken/keep")));
}
