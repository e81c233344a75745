import cv2
import numpy as np

from mmpar.image import imnormalize


def test_imnormalize_accepts_a_strided_view_and_leaves_it_unchanged():
    # mmcls's CIFAR10 hands the pipeline HWC views of CHW rows (non-contiguous arrays).
    chw = np.random.default_rng(0).integers(0, 256, (3, 8, 8), dtype=np.uint8)
    hwc = chw.transpose(1, 2, 0)
    assert not hwc.flags.c_contiguous
    mean, std = np.array([10.0, 20.0, 30.0]), np.array([2.0, 4.0, 8.0])
    out = imnormalize(hwc, mean, std, to_rgb=True)
    expected = (cv2.cvtColor(np.ascontiguousarray(hwc), cv2.COLOR_BGR2RGB) - mean) / std
    np.testing.assert_allclose(out, expected.astype(np.float32), rtol=1e-6)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(hwc, chw.transpose(1, 2, 0))
