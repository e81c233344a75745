"""mmpar.cnn: mmcv 1.x's ``mmcv.cnn`` (every name it exports, at the same paths).

Layer bricks and their registries (:mod:`.bricks`), the model registry ``MODELS`` with its
builder (:mod:`.builder`), FLOPs counting, conv-BN fusion and weight initialisation
(:mod:`.utils`; the initialisers are :mod:`mmpar.runner.model_setup.weight_init`'s), mmcv's plain
VGG/ResNet/AlexNet backbones and the receptive-field search (:mod:`.rfsearch`).
"""

from . import bricks, utils
from .alexnet import AlexNet
from .bricks import (  # noqa: F401 (re-exported: __all__ takes the bricks imported here)
    ACTIVATION_LAYERS,
    CONV_LAYERS,
    NORM_LAYERS,
    PADDING_LAYERS,
    PLUGIN_LAYERS,
    UPSAMPLE_LAYERS,
    ContextBlock,
    Conv2d,
    Conv3d,
    ConvAWS2d,
    ConvModule,
    ConvTranspose2d,
    ConvTranspose3d,
    ConvWS2d,
    DepthwiseSeparableConvModule,
    GeneralizedAttention,
    HSigmoid,
    HSwish,
    Linear,
    MaxPool2d,
    MaxPool3d,
    NonLocal1d,
    NonLocal2d,
    NonLocal3d,
    Scale,
    Swish,
    build_activation_layer,
    build_conv_layer,
    build_norm_layer,
    build_padding_layer,
    build_plugin_layer,
    build_upsample_layer,
    conv_ws_2d,
    is_norm,
)
from .builder import MODELS, build_model_from_cfg
from .resnet import ResNet, make_res_layer
from .rfsearch import Conv2dRFSearchOp, RFSearchHook
from .utils import *  # noqa: F403 (mmcv.cnn re-exports cnn.utils but revert_sync_batchnorm)
from .vgg import VGG, make_vgg_layer

# cnn.utils's names are listed once, in cnn/utils (mmcv.cnn leaves out revert_sync_batchnorm),
# and the bricks mmcv.cnn re-exports once, in the import from .bricks above.
__all__ = [
    *(name for name in utils.__all__ if name != "revert_sync_batchnorm"),
    *(name for name in bricks.__all__ if name in globals()),
    "MODELS",
    "VGG",
    "AlexNet",
    "Conv2dRFSearchOp",
    "RFSearchHook",
    "ResNet",
    "build_model_from_cfg",
    "make_res_layer",
    "make_vgg_layer",
]
