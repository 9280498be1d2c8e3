/* Model definitions. Layer and parameter names follow the reference each model
 * comes from (Caffe's conv1..fc8 for AlexNet, torchvision's for ResNets) so that
 * per-layer tables read like the papers' and checkpoints load into PyTorch.
 * FLOPs count convolution and fully connected layers only, a multiply-add as 2. */
#include "models.h"

#include <stdio.h>
#include <string.h>

#include "../base/name_table.h"

static const Init ZERO = {INIT_ZERO, 0};
static const Init TORCH = {INIT_TORCH_DEFAULT, 0};
static const Init KAIMING = {INIT_KAIMING_NORMAL, 0};
static const Init HE = {INIT_HE_GAUSSIAN, 0};
static Init gauss(double std) { return (Init){INIT_GAUSSIAN, std}; }
static Init constant(double v) { return (Init){INIT_CONSTANT, v}; }

/* ---- LeNet-5 (ReLU, max pooling), 28x28x1 ---- */
static void build_lenet(Net *net, int classes)
{
    int x = nb_conv(net, "conv1", NET_INPUT, 6, 5, 1, 2, 1, true, TORCH, TORCH);
    x = nb_relu_maxpool(net, x, 2, 2, 0);
    x = nb_conv(net, "conv2", x, 16, 5, 1, 0, 1, true, TORCH, TORCH);
    x = nb_relu_maxpool(net, x, 2, 2, 0);
    x = nb_relu(net, nb_linear(net, "fc1", x, 120, true, TORCH, TORCH));
    x = nb_relu(net, nb_linear(net, "fc2", x, 84, true, TORCH, TORCH));
    x = nb_linear(net, "fc3", x, classes, true, TORCH, TORCH);
    nb_softmax_xent(net, x);
}

/* ---- Shallue et al. 2018's simple CNN: two 5x5 conv + max pool, one dense ---- */
static void build_simple_cnn(Net *net, int classes)
{
    int x = nb_conv(net, "conv1", NET_INPUT, 32, 5, 1, 2, 1, true, TORCH, TORCH);
    x = nb_relu_maxpool(net, x, 2, 2, 0);
    x = nb_conv(net, "conv2", x, 64, 5, 1, 2, 1, true, TORCH, TORCH);
    x = nb_relu_maxpool(net, x, 2, 2, 0);
    x = nb_relu(net, nb_linear(net, "fc1", x, 1024, true, TORCH, TORCH));
    x = nb_linear(net, "fc2", x, classes, true, TORCH, TORCH);
    nb_softmax_xent(net, x);
}

/* ReLU, BVLC's LRN where there is one, and AlexNet's max pooling 3/2 */
static int relu_lrn_pool(Net *net, int x, bool lrn, const char *norm)
{
    if (!lrn) return nb_relu_maxpool(net, x, 3, 2, 0);
    return nb_maxpool(net, nb_lrn(net, norm, nb_relu(net, x), 5, 1e-4, 0.75, 1), 3, 2, 0);
}

/* ---- BVLC AlexNet (227x227, LRN, groups of 2) and NVCaffe AlexNet-BN ----
 * BVLC fillers: conv gaussian 0.01, fc6/fc7 gaussian 0.005, fc8 0.01; biases 0
 * for conv1, conv3, fc8 and 0.1 elsewhere. AlexNet-BN (NVCaffe train_val2): no
 * LRN; BatchNorm without scale/shift (eps 1e-4, moving average 0.9) before
 * conv2..conv5; conv2/4/5 keep BVLC's groups of 2. A ReLU that meets a max pooling follows
 * it here (nb_relu_maxpool: the same values and gradients). */
static void build_alexnet_full(Net *net, int classes, bool bn)
{
    int x = nb_conv(net, "conv1", NET_INPUT, 96, 11, 4, 0, 1, true, gauss(0.01), ZERO);
    x = relu_lrn_pool(net, x, !bn, "norm1");
    if (bn) x = nb_batchnorm(net, "bn2", x, false, 1e-4, 0.1);
    x = relu_lrn_pool(net, nb_conv(net, "conv2", x, 256, 5, 1, 2, 2, true, gauss(0.01), constant(0.1)), !bn, "norm2");
    if (bn) x = nb_batchnorm(net, "bn3", x, false, 1e-4, 0.1);
    x = nb_relu(net, nb_conv(net, "conv3", x, 384, 3, 1, 1, 1, true, gauss(0.01), ZERO));
    if (bn) x = nb_batchnorm(net, "bn4", x, false, 1e-4, 0.1);
    x = nb_relu(net, nb_conv(net, "conv4", x, 384, 3, 1, 1, 2, true, gauss(0.01), constant(0.1)));
    if (bn) x = nb_batchnorm(net, "bn5", x, false, 1e-4, 0.1);
    x = nb_relu_maxpool(net, nb_conv(net, "conv5", x, 256, 3, 1, 1, 2, true, gauss(0.01), constant(0.1)), 3, 2, 0);
    x = nb_dropout(net, nb_relu(net, nb_linear(net, "fc6", x, 4096, true, gauss(0.005), constant(0.1))), 0.5);
    x = nb_dropout(net, nb_relu(net, nb_linear(net, "fc7", x, 4096, true, gauss(0.005), constant(0.1))), 0.5);
    x = nb_linear(net, "fc8", x, classes, true, gauss(0.01), ZERO);
    nb_softmax_xent(net, x);
}

/* ---- AlexNet proxies for 32x32x3: five conv + three fc, ~14 M multiply-adds ----
 * Same layer order as BVLC (LRN after relu1/relu2) or NVCaffe (BN without affine
 * before conv2..conv5), but for each ReLU that meets a max pooling, which follows it here
 * (nb_relu_maxpool: the same values and gradients). Gaussian fillers scaled by fan-in (Caffe "msra"), because
 * the full-size std of 0.01 leaves a net this narrow untrainable in a few epochs. */
static void build_alexnet_cifar(Net *net, int classes, bool bn)
{
    int x = nb_conv(net, "conv1", NET_INPUT, 32, 5, 1, 2, 1, true, HE, ZERO);
    x = relu_lrn_pool(net, x, !bn, "norm1"); /* 32 -> 15 */
    if (bn) x = nb_batchnorm(net, "bn2", x, false, 1e-4, 0.1);
    x = relu_lrn_pool(net, nb_conv(net, "conv2", x, 64, 3, 1, 1, 1, true, HE, ZERO), !bn, "norm2"); /* 15 -> 7 */
    if (bn) x = nb_batchnorm(net, "bn3", x, false, 1e-4, 0.1);
    x = nb_relu(net, nb_conv(net, "conv3", x, 96, 3, 1, 1, 1, true, HE, ZERO));
    if (bn) x = nb_batchnorm(net, "bn4", x, false, 1e-4, 0.1);
    x = nb_relu(net, nb_conv(net, "conv4", x, 64, 3, 1, 1, 1, true, HE, ZERO));
    if (bn) x = nb_batchnorm(net, "bn5", x, false, 1e-4, 0.1);
    x = nb_relu_maxpool(net, nb_conv(net, "conv5", x, 64, 3, 1, 1, 1, true, HE, ZERO), 3, 2, 0); /* 7 -> 3 */
    x = nb_dropout(net, nb_relu(net, nb_linear(net, "fc6", x, 256, true, HE, ZERO)), 0.5);
    x = nb_dropout(net, nb_relu(net, nb_linear(net, "fc7", x, 256, true, HE, ZERO)), 0.5);
    x = nb_linear(net, "fc8", x, classes, true, gauss(0.01), ZERO);
    nb_softmax_xent(net, x);
}

/* ---- ResNets (torchvision naming, Kaiming normal fan_out, BN 1/0) ---- */
/* conv then BN, and with `relu` a ReLU fused into the BN (nb_batchnorm_relu) */
static int conv_bn(Net *net, const char *prefix, const char *conv, const char *bn, int x, int out_c,
                   int k, int stride, int pad, bool relu)
{
    char cn[64], bname[64];
    snprintf(cn, sizeof cn, "%s%s", prefix, conv);
    snprintf(bname, sizeof bname, "%s%s", prefix, bn);
    x = nb_conv(net, cn, x, out_c, k, stride, pad, 1, false, KAIMING, ZERO);
    return relu ? nb_batchnorm_relu(net, bname, x, true, 1e-5, 0.1) : nb_batchnorm(net, bname, x, true, 1e-5, 0.1);
}

static int shortcut(Net *net, const char *prefix, int x, int in_c, int out_c, int stride)
{
    if (stride == 1 && in_c == out_c) return x;
    return conv_bn(net, prefix, "downsample.0", "downsample.1", x, out_c, 1, stride, 0, false);
}

/* CIFAR ResNet (He et al. 2016, sec. 4.2): 3 stages of 16/32/64 channels, `blocks`
 * basic blocks each; projection shortcuts (1x1 conv + BN, "option B") where the
 * shape changes. resnet20: 3 blocks per stage; resnet8: 1 (Shallue et al.). */
static void build_cifar_resnet(Net *net, int classes, int blocks)
{
    int x = conv_bn(net, "", "conv1", "bn1", NET_INPUT, 16, 3, 1, 1, true);
    int in_c = 16;
    for (int stage = 0; stage < 3; stage++) {
        int out_c = 16 << stage;
        for (int b = 0; b < blocks; b++) {
            int stride = (stage > 0 && b == 0) ? 2 : 1;
            char prefix[32];
            snprintf(prefix, sizeof prefix, "layer%d.%d.", stage + 1, b);
            int y = conv_bn(net, prefix, "conv1", "bn1", x, out_c, 3, stride, 1, true);
            y = conv_bn(net, prefix, "conv2", "bn2", y, out_c, 3, 1, 1, false);
            x = nb_add_relu(net, y, shortcut(net, prefix, x, in_c, out_c, stride));
            in_c = out_c;
        }
    }
    x = nb_global_avgpool(net, x);
    x = nb_linear(net, "fc", x, classes, true, TORCH, TORCH);
    nb_softmax_xent(net, x);
}

/* ResNet-50 v1.5 (torchvision): the stride-2 of a downsampling bottleneck is on
 * its 3x3 convolution, not its first 1x1 (v1). */
static void build_resnet50(Net *net, int classes)
{
    int x = nb_relu_maxpool(net, conv_bn(net, "", "conv1", "bn1", NET_INPUT, 64, 7, 2, 3, false), 3, 2, 1);
    const int depth[4] = {3, 4, 6, 3};
    int in_c = 64;
    for (int stage = 0; stage < 4; stage++) {
        int width = 64 << stage, out_c = width * 4;
        for (int b = 0; b < depth[stage]; b++) {
            int stride = (stage > 0 && b == 0) ? 2 : 1;
            char prefix[32];
            snprintf(prefix, sizeof prefix, "layer%d.%d.", stage + 1, b);
            int y = conv_bn(net, prefix, "conv1", "bn1", x, width, 1, 1, 0, true);
            y = conv_bn(net, prefix, "conv2", "bn2", y, width, 3, stride, 1, true);
            y = conv_bn(net, prefix, "conv3", "bn3", y, out_c, 1, 1, 0, false);
            x = nb_add_relu(net, y, shortcut(net, prefix, x, in_c, out_c, stride));
            in_c = out_c;
        }
    }
    x = nb_global_avgpool(net, x);
    x = nb_linear(net, "fc", x, classes, true, TORCH, TORCH);
    nb_softmax_xent(net, x);
}

/* The variants, one builder each for the table. */
static void build_alexnet(Net *net, int classes) { build_alexnet_full(net, classes, false); }
static void build_alexnet_bn(Net *net, int classes) { build_alexnet_full(net, classes, true); }
static void build_alexnet_lrn_cifar(Net *net, int classes) { build_alexnet_cifar(net, classes, false); }
static void build_alexnet_bn_cifar(Net *net, int classes) { build_alexnet_cifar(net, classes, true); }
static void build_resnet20(Net *net, int classes) { build_cifar_resnet(net, classes, 3); }
static void build_resnet8(Net *net, int classes) { build_cifar_resnet(net, classes, 1); }

/* Every model, in display order: the one list that `bigbatch models`, `train --model`,
 * `scale`, `bench` and the error for an unknown name read. */
static const ModelInfo MODELS[] = {
    {"lenet", "LeNet-5 (ReLU, max pool), proxy for Fashion-MNIST", 1, 28, 28, 10, build_lenet},
    {"simple-cnn", "Shallue et al. simple CNN: 2 conv 5x5 (32, 64) + dense 1024", 1, 28, 28, 10, build_simple_cnn},
    {"alexnet-cifar", "AlexNet proxy: 5 conv + 3 fc, LRN, dropout (CIFAR 32x32)", 3, 32, 32, 10,
     build_alexnet_lrn_cifar},
    {"alexnet-bn-cifar", "AlexNet-BN proxy: 5 conv + 3 fc, BN without affine (CIFAR 32x32)", 3, 32, 32, 10,
     build_alexnet_bn_cifar},
    {"resnet20", "CIFAR ResNet-20 (He et al. 2016), projection shortcuts", 3, 32, 32, 10, build_resnet20},
    {"resnet8", "CIFAR ResNet-8, one block per stage (Shallue et al. 2018)", 3, 32, 32, 10, build_resnet8},
    {"alexnet", "BVLC AlexNet: 227 crop, LRN, groups of 2 (1708.03888)", 3, 227, 227, 1000, build_alexnet},
    {"alexnet-bn", "NVCaffe AlexNet-BN: BN without affine before conv2-5, no LRN", 3, 227, 227, 1000,
     build_alexnet_bn},
    {"resnet50", "ResNet-50 v1.5 (stride on the 3x3 conv), torchvision layout", 3, 224, 224, 1000, build_resnet50},
};
enum { N_MODELS = (int)(sizeof MODELS / sizeof MODELS[0]) };
static const NameTable NAMES = NAME_TABLE(MODELS);

const ModelInfo *model_list(int *count)
{
    *count = N_MODELS;
    return MODELS;
}

const ModelInfo *model_find(const char *name)
{
    return name_table_find(NAMES, name);
}

char *model_names(char *buf, size_t len, const char *sep)
{
    return name_table_join(NAMES, buf, len, sep, sep);
}

Net *model_build_shapes(const char *name, Backend *bk, int classes, Error *err)
{
    const ModelInfo *info = model_find(name);
    if (!info) {
        name_table_unknown(NAMES, "model", name, "known: ", ", ", err);
        return NULL;
    }
    if (classes <= 0) classes = info->classes;
    Net *net = net_create(info->name, bk, info->in_c, info->in_h, info->in_w);
    info->build(net, classes);
    net_finalize(net);
    return net;
}

Net *model_build(const char *name, Backend *bk, int classes, uint64_t seed, Error *err)
{
    Net *net = model_build_shapes(name, bk, classes, err);
    if (net) net_init_params(net, seed);
    return net;
}
