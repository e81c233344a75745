"""mmpar.image.io: decoding with OpenCV and Pillow, flags, channel order, EXIF, file clients."""

import io
import sys

import cv2
import numpy as np
import pytest
from numpy.testing import assert_array_equal
from PIL import Image

from mmpar import image as mmimage
from mmpar.fileio import FileClient
from mmpar.image import io as image_io


@pytest.fixture(autouse=True)
def _restore_backend():
    yield
    image_io.imread_backend = "cv2"


def _png(img) -> bytes:
    ok, buffer = cv2.imencode(".png", img)
    assert ok
    return buffer.tobytes()


def test_flag_table_is_mmcvs():
    assert mmimage.supported_backends == ["cv2", "turbojpeg", "pillow", "tifffile"]
    assert image_io.imread_flags == {
        "color": cv2.IMREAD_COLOR,
        "grayscale": cv2.IMREAD_GRAYSCALE,
        "unchanged": cv2.IMREAD_UNCHANGED,
        "color_ignore_orientation": cv2.IMREAD_IGNORE_ORIENTATION | cv2.IMREAD_COLOR,
        "grayscale_ignore_orientation": cv2.IMREAD_IGNORE_ORIENTATION | cv2.IMREAD_GRAYSCALE,
    }


@pytest.mark.parametrize("suffix", [".png", ".bmp", ".jpg"])
def test_imwrite_imread_round_trip(tmp_path, bgr, suffix):
    path = tmp_path / "sub" / f"img{suffix}"  # the folder is created
    assert mmimage.imwrite(bgr, str(path)) is True
    expected = cv2.imread(str(path))
    for source in (str(path), path):  # a str or a pathlib.Path
        img = mmimage.imread(source)
        assert img.dtype == np.uint8 and img.shape == (24, 32, 3)
        assert_array_equal(img, expected)
    if suffix != ".jpg":  # lossless formats give the pixels back
        assert_array_equal(expected, bgr)


def test_imwrite_params_and_auto_mkdir(tmp_path, bgr):
    low = tmp_path / "low.jpg"
    high = tmp_path / "high.jpg"
    mmimage.imwrite(bgr, str(low), params=[cv2.IMWRITE_JPEG_QUALITY, 5])
    mmimage.imwrite(bgr, high, params=[cv2.IMWRITE_JPEG_QUALITY, 100])
    assert low.stat().st_size < high.stat().st_size
    with pytest.warns(DeprecationWarning, match="auto_mkdir"):
        mmimage.imwrite(bgr, str(tmp_path / "a" / "b.png"), auto_mkdir=False)
    assert (tmp_path / "a" / "b.png").exists()
    with pytest.raises(AssertionError):
        mmimage.imwrite(bgr, 3)


def test_imwrite_through_a_file_client_backend(tmp_path, bgr):
    path = str(tmp_path / "img.png")
    mmimage.imwrite(bgr, path, file_client_args={"backend": "disk"})
    got = mmimage.imread(path, file_client_args={"backend": "disk"})
    assert_array_equal(got, bgr)
    assert_array_equal(mmimage.imfrombytes(FileClient("disk").get(path)), bgr)


@pytest.mark.parametrize("backend", ["cv2", "pillow"])
def test_flags_and_channel_order(bgr, backend):
    content = _png(bgr)
    gray = cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)
    for flag in ("color", "color_ignore_orientation"):
        assert_array_equal(mmimage.imfrombytes(content, flag, backend=backend), bgr)
        rgb = mmimage.imfrombytes(content, flag, "rgb", backend=backend)
        assert_array_equal(rgb, bgr[..., ::-1])
    for flag in ("grayscale", "grayscale_ignore_orientation"):
        got = mmimage.imfrombytes(content, flag, backend=backend)
        assert got.shape == (24, 32)
        # OpenCV and Pillow weigh the channels alike but round a little differently.
        assert np.abs(got.astype(int) - gray).max() <= 1
    assert_array_equal(mmimage.imfrombytes(content, "unchanged", backend=backend), bgr)
    with pytest.raises(ValueError, match="channel_order"):
        mmimage.imfrombytes(content, "color", "grb", backend=backend)


def test_pillow_backend_equals_pil(bgr):
    content = _png(bgr)
    expected = np.array(Image.open(io.BytesIO(content)).convert("L"))
    assert_array_equal(mmimage.imfrombytes(content, "grayscale", backend="pillow"), expected)
    with pytest.raises(ValueError, match="flag"):
        mmimage.imfrombytes(content, "colour", backend="pillow")


def test_unchanged_keeps_alpha_and_depth(bgr, gray):
    bgra = np.dstack([bgr, gray])
    content = _png(bgra)
    for backend in ("cv2", "pillow"):
        got = mmimage.imfrombytes(content, "unchanged", backend=backend)
        assert got.shape == (24, 32, 4)
        assert_array_equal(got, bgra)  # colour in BGR order, alpha last, like OpenCV
    deep = gray.astype(np.uint16) * 200
    got = mmimage.imfrombytes(_png(deep), "unchanged")
    assert got.dtype == np.uint16
    assert_array_equal(got, deep)


def test_pillow_la_images_are_composed_on_mmcvs_canvas():
    la = Image.new("LA", (4, 2), (0, 0))  # black, fully transparent
    la.putpixel((0, 0), (200, 255))  # one opaque gray pixel
    buffer = io.BytesIO()
    la.save(buffer, format="PNG")
    got = mmimage.imfrombytes(buffer.getvalue(), "color", "rgb", backend="pillow")
    assert_array_equal(got[0, 0], [200, 200, 200])
    assert_array_equal(got[1, 3], [124, 117, 104])


def _jpeg_with_orientation(rgb, orientation):
    pil_image = Image.fromarray(rgb)
    exif = pil_image.getexif()
    exif[0x0112] = orientation
    buffer = io.BytesIO()
    pil_image.save(buffer, format="JPEG", exif=exif, quality=100)
    return buffer.getvalue()


@pytest.mark.parametrize("backend", ["cv2", "pillow"])
def test_exif_orientation(bgr, backend):
    content = _jpeg_with_orientation(bgr[..., ::-1], 6)  # 6: rotate 90 degrees clockwise
    rotated = mmimage.imfrombytes(content, "color", backend=backend)
    as_stored = mmimage.imfrombytes(content, "color_ignore_orientation", backend=backend)
    assert as_stored.shape == (24, 32, 3) and rotated.shape == (32, 24, 3)
    assert_array_equal(rotated, np.rot90(as_stored, -1))
    assert mmimage.imfrombytes(content, "grayscale", backend=backend).shape == (32, 24)
    ignored = mmimage.imfrombytes(content, "grayscale_ignore_orientation", backend=backend)
    assert ignored.shape == (24, 32)


def test_undecodable_bytes_give_none_with_opencv():
    # mmcv returns cv2.imdecode's None, and mmpose checks for it.
    assert mmimage.imfrombytes(b"not an image") is None
    assert mmimage.imfrombytes(b"not an image", channel_order="rgb") is None


def test_imread_passes_arrays_through_and_rejects_other_types(tmp_path, bgr):
    assert mmimage.imread(bgr) is bgr
    with pytest.raises(TypeError):
        mmimage.imread(3)
    with pytest.raises(FileNotFoundError):
        mmimage.imread(str(tmp_path / "missing.png"))


def test_imread_with_an_opencv_int_flag(tmp_path, bgr):
    path = tmp_path / "img.png"
    mmimage.imwrite(bgr, str(path))
    half = mmimage.imread(path, flag=cv2.IMREAD_REDUCED_COLOR_2)
    assert_array_equal(half, cv2.imread(str(path), cv2.IMREAD_REDUCED_COLOR_2))


def test_use_backend_selects_the_default_decoder(bgr):
    content = _png(bgr)
    mmimage.use_backend("pillow")
    assert image_io.imread_backend == "pillow"
    with pytest.raises(ValueError, match="flag"):  # only Pillow rejects this flag
        mmimage.imfrombytes(content, "colour")
    mmimage.use_backend("cv2")
    with pytest.raises(KeyError):
        mmimage.imfrombytes(content, "colour")
    with pytest.raises(AssertionError):
        mmimage.use_backend("magick")
    with pytest.raises(ValueError, match="magick"):
        mmimage.imfrombytes(content, backend="magick")


@pytest.mark.parametrize(
    ("backend", "package"), [("turbojpeg", "PyTurboJPEG"), ("tifffile", "tifffile")]
)
def test_optional_backends_fail_clearly_when_missing(bgr, backend, package, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_optional(name, *args, **kwargs):
        if name.split(".")[0] == backend:
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_optional)
    monkeypatch.setattr(image_io, "jpeg", None)
    # mmcv's module attributes for the optional package are None, as in mmcv.
    assert getattr(image_io, "TurboJPEG" if backend == "turbojpeg" else "tifffile") is None
    with pytest.raises(ImportError, match=package):
        mmimage.use_backend(backend)
    assert image_io.imread_backend == "cv2"  # unchanged by the failed selection
    with pytest.raises(ImportError, match=package):
        mmimage.imfrombytes(_png(bgr), backend=backend)


class _FakeTurboJPEG:
    """Stands in for PyTurboJPEG's decoder (not installed here): decodes with OpenCV."""

    TJPF_RGB, TJPF_BGR, TJPF_GRAY = 0, 1, 6

    def decode(self, content, pixel_format):
        img = cv2.imdecode(np.frombuffer(content, np.uint8), cv2.IMREAD_COLOR)
        if pixel_format == self.TJPF_GRAY:
            return cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)[..., None]
        return img[..., ::-1] if pixel_format == self.TJPF_RGB else img


def test_turbojpeg_backend_plumbing(bgr, monkeypatch):
    import types

    module = types.ModuleType("turbojpeg")
    module.TurboJPEG = _FakeTurboJPEG
    for name in ("TJPF_RGB", "TJPF_BGR", "TJPF_GRAY"):
        setattr(module, name, getattr(_FakeTurboJPEG, name))
    monkeypatch.setitem(sys.modules, "turbojpeg", module)
    monkeypatch.setattr(image_io, "jpeg", None)
    assert image_io.TurboJPEG is _FakeTurboJPEG  # mmcv's module attributes, looked up lazily
    assert image_io.TJPF_GRAY == 6
    mmimage.use_backend("turbojpeg")
    assert isinstance(image_io.jpeg, _FakeTurboJPEG)
    content = _png(bgr)
    assert_array_equal(mmimage.imfrombytes(content), bgr)
    assert_array_equal(mmimage.imfrombytes(content, channel_order="rgb"), bgr[..., ::-1])
    gray = mmimage.imfrombytes(content, "grayscale")
    assert gray.shape == (24, 32)  # the channel axis of size 1 is dropped
    with pytest.raises(ValueError, match="turbojpeg"):
        mmimage.imfrombytes(content, "unchanged")


def test_tifffile_backend_plumbing(bgr, monkeypatch):
    import types

    module = types.ModuleType("tifffile")
    module.imread = lambda buffer: np.load(buffer)  # the stored array, as tifffile returns it
    monkeypatch.setitem(sys.modules, "tifffile", module)
    assert image_io.tifffile is module
    buffer = io.BytesIO()
    np.save(buffer, bgr)
    got = mmimage.imfrombytes(buffer.getvalue(), "grayscale", "rgb", backend="tifffile")
    assert_array_equal(got, bgr)  # flag and channel order do not apply


def test_pillow_backend_without_pillow_is_an_import_error(monkeypatch):
    before = image_io.imread_backend
    monkeypatch.setattr(image_io, "Image", None)
    with pytest.raises(ImportError, match="Pillow"):
        mmimage.use_backend("pillow")
    assert image_io.imread_backend == before  # the selection is unchanged
