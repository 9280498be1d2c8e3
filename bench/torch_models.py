"""PyTorch definitions of the networks `make bench` compares, built exactly as
engine/net/models.c builds them: same layer order, channels, kernels, strides,
padding, LRN and BN settings, dropout, and the same parameter names (so
bench/torch_bench.py can check every parameter's name and shape against
`bigbatch bench --model M --list-params`).

  lenet             build_lenet
  alexnet-cifar     build_alexnet_cifar(bn=false): LRN after relu1/relu2
  alexnet-bn-cifar  build_alexnet_cifar(bn=true): BN without affine before conv2..conv5
  resnet20          build_cifar_resnet(blocks=3): projection shortcuts (1x1 conv + BN)

ReLUs are in place where the engine's would be (torchvision's style); it changes
memory, not arithmetic. Initialization is PyTorch's default: the benchmark measures
speed, and the values do not change the work.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

# name -> (input C, H, W), classes: engine/net/models.c MODELS
INPUTS = {
    "lenet": ((1, 28, 28), 10),
    "simple-cnn": ((1, 28, 28), 10),
    "alexnet-cifar": ((3, 32, 32), 10),
    "alexnet-bn-cifar": ((3, 32, 32), 10),
    "resnet20": ((3, 32, 32), 10),
    "resnet8": ((3, 32, 32), 10),
    "alexnet": ((3, 227, 227), 1000),
    "alexnet-bn": ((3, 227, 227), 1000),
    "resnet50": ((3, 224, 224), 1000),
}
FULL_SIZE = ("alexnet", "alexnet-bn", "resnet50")


class LeNet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, stride=1, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5, stride=1, padding=0)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x), inplace=True), 2, 2)  # 28 -> 14
        x = F.max_pool2d(F.relu(self.conv2(x), inplace=True), 2, 2)  # 10 -> 5
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x), inplace=True)
        x = F.relu(self.fc2(x), inplace=True)
        return self.fc3(x)


class SimpleCNN(nn.Module):
    """Shallue et al. 2018: two 5x5 conv (32, 64) + max pool, one dense 1024."""

    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 5, stride=1, padding=2)
        self.conv2 = nn.Conv2d(32, 64, 5, stride=1, padding=2)
        self.fc1 = nn.Linear(64 * 7 * 7, 1024)
        self.fc2 = nn.Linear(1024, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x), inplace=True), 2, 2)  # 28 -> 14
        x = F.max_pool2d(F.relu(self.conv2(x), inplace=True), 2, 2)  # 14 -> 7
        x = F.relu(self.fc1(torch.flatten(x, 1)), inplace=True)
        return self.fc2(x)


class AlexNetCifar(nn.Module):
    """Five conv + three fc for 32x32x3. bn=False: LRN(5, 1e-4, 0.75, 1) after
    relu1 and relu2 (BVLC order); bn=True: no LRN, BatchNorm without affine
    (eps 1e-4, momentum 0.1) before conv2..conv5 (NVCaffe AlexNet-BN)."""

    def __init__(self, bn, classes=10):
        super().__init__()
        self.use_bn = bn
        self.conv1 = nn.Conv2d(3, 32, 5, stride=1, padding=2)
        self.conv2 = nn.Conv2d(32, 64, 3, stride=1, padding=1)
        self.conv3 = nn.Conv2d(64, 96, 3, stride=1, padding=1)
        self.conv4 = nn.Conv2d(96, 64, 3, stride=1, padding=1)
        self.conv5 = nn.Conv2d(64, 64, 3, stride=1, padding=1)
        if bn:
            self.bn2 = nn.BatchNorm2d(32, eps=1e-4, momentum=0.1, affine=False)
            self.bn3 = nn.BatchNorm2d(64, eps=1e-4, momentum=0.1, affine=False)
            self.bn4 = nn.BatchNorm2d(96, eps=1e-4, momentum=0.1, affine=False)
            self.bn5 = nn.BatchNorm2d(64, eps=1e-4, momentum=0.1, affine=False)
        else:
            self.norm1 = nn.LocalResponseNorm(5, alpha=1e-4, beta=0.75, k=1.0)
            self.norm2 = nn.LocalResponseNorm(5, alpha=1e-4, beta=0.75, k=1.0)
        self.fc6 = nn.Linear(64 * 3 * 3, 256)
        self.fc7 = nn.Linear(256, 256)
        self.fc8 = nn.Linear(256, classes)
        self.drop6 = nn.Dropout(0.5)
        self.drop7 = nn.Dropout(0.5)

    def forward(self, x):
        bn = self.use_bn
        x = F.relu(self.conv1(x), inplace=True)
        if not bn:
            x = self.norm1(x)
        x = F.max_pool2d(x, 3, 2)  # 32 -> 15 (227: 55 -> 27)
        if bn:
            x = self.bn2(x)
        x = F.relu(self.conv2(x), inplace=True)
        if not bn:
            x = self.norm2(x)
        x = F.max_pool2d(x, 3, 2)  # 15 -> 7
        if bn:
            x = self.bn3(x)
        x = F.relu(self.conv3(x), inplace=True)
        if bn:
            x = self.bn4(x)
        x = F.relu(self.conv4(x), inplace=True)
        if bn:
            x = self.bn5(x)
        x = F.relu(self.conv5(x), inplace=True)
        x = F.max_pool2d(x, 3, 2)  # 7 -> 3
        x = torch.flatten(x, 1)
        x = self.drop6(F.relu(self.fc6(x), inplace=True))
        x = self.drop7(F.relu(self.fc7(x), inplace=True))
        return self.fc8(x)


class AlexNet(AlexNetCifar):
    """BVLC AlexNet at 227x227 (LRN after relu1/relu2, groups of 2 in conv2/4/5), or
    NVCaffe's AlexNet-BN (bn=True: no LRN, BatchNorm without affine, eps 1e-4, before
    conv2..conv5). torchvision's AlexNet is a different net (no LRN, no groups, 64/192
    channels), so this is written out; the layer order, and so forward, is AlexNetCifar's."""

    def __init__(self, bn, classes=1000):
        nn.Module.__init__(self)
        self.use_bn = bn
        self.conv1 = nn.Conv2d(3, 96, 11, stride=4)
        self.conv2 = nn.Conv2d(96, 256, 5, padding=2, groups=2)
        self.conv3 = nn.Conv2d(256, 384, 3, padding=1)
        self.conv4 = nn.Conv2d(384, 384, 3, padding=1, groups=2)
        self.conv5 = nn.Conv2d(384, 256, 3, padding=1, groups=2)
        if bn:
            self.bn2 = nn.BatchNorm2d(96, eps=1e-4, momentum=0.1, affine=False)
            self.bn3 = nn.BatchNorm2d(256, eps=1e-4, momentum=0.1, affine=False)
            self.bn4 = nn.BatchNorm2d(384, eps=1e-4, momentum=0.1, affine=False)
            self.bn5 = nn.BatchNorm2d(384, eps=1e-4, momentum=0.1, affine=False)
        else:
            self.norm1 = nn.LocalResponseNorm(5, alpha=1e-4, beta=0.75, k=1.0)
            self.norm2 = nn.LocalResponseNorm(5, alpha=1e-4, beta=0.75, k=1.0)
        self.fc6 = nn.Linear(256 * 6 * 6, 4096)
        self.fc7 = nn.Linear(4096, 4096)
        self.fc8 = nn.Linear(4096, classes)
        self.drop6 = nn.Dropout(0.5)
        self.drop7 = nn.Dropout(0.5)


class BasicBlock(nn.Module):
    def __init__(self, in_c, out_c, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(in_c, out_c, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_c, eps=1e-5, momentum=0.1)
        self.conv2 = nn.Conv2d(out_c, out_c, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_c, eps=1e-5, momentum=0.1)
        self.downsample = None
        if stride != 1 or in_c != out_c:  # projection shortcut ("option B")
            self.downsample = nn.Sequential(
                nn.Conv2d(in_c, out_c, 1, stride, 0, bias=False),
                nn.BatchNorm2d(out_c, eps=1e-5, momentum=0.1))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)), inplace=True)
        y = self.bn2(self.conv2(y))
        s = x if self.downsample is None else self.downsample(x)
        return F.relu(y + s, inplace=True)


class CifarResNet(nn.Module):
    """He et al. 2016 sec. 4.2: 16/32/64 channels, `blocks` basic blocks per stage."""

    def __init__(self, blocks, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(16, eps=1e-5, momentum=0.1)
        in_c = 16
        for stage in range(3):
            out_c = 16 << stage
            layer = []
            for b in range(blocks):
                stride = 2 if stage > 0 and b == 0 else 1
                layer.append(BasicBlock(in_c, out_c, stride))
                in_c = out_c
            setattr(self, "layer%d" % (stage + 1), nn.Sequential(*layer))
        self.fc = nn.Linear(64, classes)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)), inplace=True)
        x = self.layer3(self.layer2(self.layer1(x)))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


class Bottleneck(nn.Module):
    """torchvision's ResNet-50 v1.5 bottleneck: the stride on the 3x3 convolution."""

    def __init__(self, in_c, width, stride):
        super().__init__()
        out_c = width * 4
        self.conv1 = nn.Conv2d(in_c, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, out_c, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(out_c)
        self.downsample = None
        if stride != 1 or in_c != out_c:
            self.downsample = nn.Sequential(nn.Conv2d(in_c, out_c, 1, stride, bias=False), nn.BatchNorm2d(out_c))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)), inplace=True)
        y = F.relu(self.bn2(self.conv2(y)), inplace=True)
        y = self.bn3(self.conv3(y))
        s = x if self.downsample is None else self.downsample(x)
        return F.relu(y + s, inplace=True)


class ResNet50(nn.Module):
    """torchvision's resnet50 layout and names, written out so that no torchvision is needed."""

    def __init__(self, classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        in_c = 64
        for stage, depth in enumerate((3, 4, 6, 3)):
            width = 64 << stage
            blocks = []
            for b in range(depth):
                blocks.append(Bottleneck(in_c, width, 2 if stage > 0 and b == 0 else 1))
                in_c = width * 4
            setattr(self, "layer%d" % (stage + 1), nn.Sequential(*blocks))
        self.fc = nn.Linear(2048, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x)), inplace=True), 3, 2, 1)
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


def build(name, classes=None):
    """The named model, and its input shape (C, H, W)."""
    if name not in INPUTS:
        raise SystemExit("torch_models: unknown model %r (known: %s)" % (name, ", ".join(INPUTS)))
    shape, default_classes = INPUTS[name]
    classes = classes or default_classes
    builders = {
        "lenet": lambda: LeNet(classes),
        "simple-cnn": lambda: SimpleCNN(classes),
        "alexnet-cifar": lambda: AlexNetCifar(False, classes),
        "alexnet-bn-cifar": lambda: AlexNetCifar(True, classes),
        "resnet20": lambda: CifarResNet(3, classes),
        "resnet8": lambda: CifarResNet(1, classes),
        "alexnet": lambda: AlexNet(False, classes),
        "alexnet-bn": lambda: AlexNet(True, classes),
        "resnet50": lambda: ResNet50(classes),
    }
    return builders[name](), shape


def param_count(model):
    return sum(p.numel() for p in model.parameters())
