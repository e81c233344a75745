"""mmcv 1.x's ``mmcv.cnn.utils.weight_init``, served by :mod:`mmpar.runner.model_setup.weight_init`.

Its one implementation is re-exported here, not copied: ``mmpar.cnn.constant_init`` is
``mmpar.runner.model_setup.weight_init.constant_init``, and an initialiser registered in
``INITIALIZERS`` through either path is seen by both.
"""

from mmpar.runner.model_setup.weight_init import (
    INITIALIZERS,
    BaseInit,
    Caffe2XavierInit,
    ConstantInit,
    KaimingInit,
    NormalInit,
    PretrainedInit,
    TruncNormalInit,
    UniformInit,
    XavierInit,
    bias_init_with_prob,
    caffe2_xavier_init,
    constant_init,
    initialize,
    kaiming_init,
    normal_init,
    trunc_normal_,
    trunc_normal_init,
    uniform_init,
    update_init_info,
    xavier_init,
)

__all__ = [
    "INITIALIZERS",
    "BaseInit",
    "Caffe2XavierInit",
    "ConstantInit",
    "KaimingInit",
    "NormalInit",
    "PretrainedInit",
    "TruncNormalInit",
    "UniformInit",
    "XavierInit",
    "bias_init_with_prob",
    "caffe2_xavier_init",
    "constant_init",
    "initialize",
    "kaiming_init",
    "normal_init",
    "trunc_normal_",
    "trunc_normal_init",
    "uniform_init",
    "update_init_info",
    "xavier_init",
]
