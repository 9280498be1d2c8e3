/* net_plan's memory plan, on every model: the layers' output gradients are packed by lifetime
 * (layer i's lives from the backward of its last consumer, its own when it has none, to its
 * own backward), and gradients live at the same time never share memory, but where a layer
 * holds its inputs' gradients in its own (LayerOps.shares_input_gradients: the residual add,
 * batch norm);
 * outputs share only where a ReLU or an add runs in place over an output
 * nothing else needs. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "../engine/net/models.h"
#include "../engine/net/net.h"

/* [first, last] in layer indices: the backward steps the gradient is live at */
static int last_consumer(const Net *net, int i)
{
    int last = i;
    for (int j = i + 1; j < net->n_layers; j++)
        for (int k = 0; k < net->layers[j].n_in; k++)
            if (net->layers[j].in[k] == i) last = j;
    return last;
}

/* Layer j holds layer i's gradient in its own, at the same address: j is i's last consumer and
 * its kind shares (net_plan's rule), i its only input where j's own gradient is held by none
 * (batch norm writes i's over it), its first input only, or its second where the first is
 * held too and i's other consumers all come before the first (they add into that memory after
 * the first's backward has read it). */
static bool held_by(const Net *net, int i, int j)
{
    const Layer *l = &net->layers[j];
    if (j != last_consumer(net, i) || !l->ops->shares_input_gradients || !l->ops->writes_fresh_gradient ||
        l->dout.data != net->layers[i].dout.data || (l->n_in == 2 && l->in[0] == l->in[1]))
        return false;
    if (l->n_in == 1) return l->in[0] == i && !held_by(net, j, last_consumer(net, j));
    if (l->in[0] == i) return true;
    if (l->n_in != 2 || l->in[1] != i || !held_by(net, l->in[0], j)) return false;
    for (int k = l->in[0]; k < j; k++)
        for (int m = 0; m < net->layers[k].n_in; m++)
            if (net->layers[k].in[m] == i) return false;
    return true;
}

/* Gradients i < j share by design: one holds the other (held_by, followed down a chain of
 * residual blocks), or both are held by one layer. */
static bool shared_by_design(const Net *net, int i, int j)
{
    for (int h = j; h < net->n_layers; h++) {
        const bool holds_i = h == i || held_by(net, i, h), holds_j = h == j || held_by(net, j, h);
        if (holds_i && holds_j) return true;
    }
    return false;
}

static void check_model(const char *name, int batch)
{
    Error err = {{0}};
    Backend *bk = backend_create(1);
    Net *net = model_build(name, bk, 0, 1, &err);
    cr_assert_not_null(net, "%s", err.msg);
    net_plan(net, batch);
    size_t separate = 0;
    const int L = net->n_layers;
    for (int i = 0; i < L; i++) {
        const Tensor *a = &net->layers[i].dout;
        separate += a->cap;
        cr_assert_geq(a->data, net->dout_block.data, "%s: %s outside the block", name, net->layers[i].name);
        cr_assert_leq(a->data + a->cap, net->dout_block.data + net->dout_block.cap, "%s: %s beyond the block", name,
                      net->layers[i].name);
        for (int j = i + 1; j < L; j++) {
            const Tensor *b = &net->layers[j].dout;
            bool live_together = j <= last_consumer(net, i); /* j's life starts at or after j */
            bool share = a->data < b->data + b->cap && b->data < a->data + a->cap;
            cr_assert(!(live_together && share) || shared_by_design(net, i, j),
                      "%s: %s and %s are live together but share memory", name, net->layers[i].name,
                      net->layers[j].name);
        }
    }
    printf("%s batch %d: output gradients %.1f MB planned, %.1f MB one per layer\n", name, batch,
           net->dout_block.cap * sizeof(real) / 1e6, separate * sizeof(real) / 1e6);
    cr_assert_lt(net->dout_block.cap, separate, "%s: the plan shares nothing", name);
    net_destroy(net);
    backend_destroy(bk);
}

Test(memory_plan, gradients_live_together_never_share)
{
    int count;
    const ModelInfo *models = model_list(&count);
    for (int i = 0; i < count; i++) check_model(models[i].name, models[i].in_h > 64 ? 2 : 8);
}

/* Outputs share memory only where a layer runs in place over its first input: that input is a
 * layer whose output nothing else reads and whose backward does not read it (the add, or the
 * add with its ReLU, over the BN before it; a ReLU after a convolution or a pooling), so what backward
 * needs is never written over. Chains (BN, add over it, ReLU over that) share one tensor. */
static void check_in_place(const Net *net, const char *name, int i, int j)
{
    const Layer *li = &net->layers[i], *lj = &net->layers[j];
    cr_assert(lj->ops->may_run_in_place, "%s: %s writes over %s but may not run in place", name, lj->name, li->name);
    cr_assert(!li->ops->reads_own_output, "%s: %s's backward reads the output %s writes over", name, li->name,
              lj->name);
    for (int k = i + 1; k < net->n_layers; k++)
        for (int m = 0; m < net->layers[k].n_in; m++)
            cr_assert(net->layers[k].in[m] != i || (k == j && m == 0), "%s: %s also reads %s, which %s writes over",
                      name, net->layers[k].name, li->name, lj->name);
}

static int check_outputs(const char *name, int batch)
{
    Error err = {{0}};
    Backend *bk = backend_create(1);
    Net *net = model_build(name, bk, 0, 1, &err);
    cr_assert_not_null(net, "%s", err.msg);
    net_plan(net, batch);
    int in_place = 0, *root = malloc(sizeof *root * (size_t)net->n_layers);
    for (int j = 0; j < net->n_layers; j++) {
        const Layer *lj = &net->layers[j];
        const int in = lj->in[0];
        root[j] = j;
        if (in >= 0 && net->layers[in].out.data == lj->out.data) {
            check_in_place(net, name, in, j);
            root[j] = root[in];
            in_place++;
        }
        for (int i = 0; i < j; i++) {
            const Layer *li = &net->layers[i];
            bool share = li->out.data < lj->out.data + lj->out.cap && lj->out.data < li->out.data + li->out.cap;
            cr_assert(!share || root[i] == root[j], "%s: %s and %s share memory outside an in-place chain", name,
                      li->name, lj->name);
        }
    }
    printf("%s: %d layers run in place\n", name, in_place);
    free(root);
    net_destroy(net);
    backend_destroy(bk);
    return in_place;
}

Test(memory_plan, in_place_only_over_outputs_nothing_else_needs)
{
    int count;
    const ModelInfo *models = model_list(&count);
    for (int i = 0; i < count; i++) {
        int in_place = check_outputs(models[i].name, 2);
        /* ResNet-50's ReLUs after a BN are one layer with it, and those after an add with the
         * add (nb_batchnorm_relu, nb_add_relu): its 16 adds run in place over their BN, and the
         * stem's ReLU over its max pooling */
        if (!strcmp(models[i].name, "resnet50")) cr_assert_eq(in_place, 17, "resnet50: %d in place", in_place);
    }
}
