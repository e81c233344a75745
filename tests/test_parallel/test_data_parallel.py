import pytest
import torch
from torch import nn

from mmpar.parallel import (
    DataContainer,
    MMDataParallel,
    collate,
)


class TinyClassifier(nn.Module):
    """Pools a padded image batch and classifies it; records what train_step received."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.seen = []

    def forward(self, img, label):
        logits = self.fc(img.mean(dim=(2, 3)))
        return nn.functional.cross_entropy(logits, label)

    def train_step(self, data_batch, optimizer=None):
        self.seen.append(data_batch)
        loss = self(data_batch["img"], data_batch["label"])
        n = len(data_batch["img_metas"])
        return {"loss": loss, "log_vars": {"loss": loss.item()}, "num_samples": n}

    def val_step(self, data_batch, optimizer=None):
        return {"names": [m["name"] for m in data_batch["img_metas"]]}


def _samples(n):
    g = torch.Generator().manual_seed(0)
    return [
        {
            "img": DataContainer(torch.rand(3, 4 + i % 3, 5 - i % 2, generator=g), stack=True),
            "img_metas": DataContainer({"name": f"{i}.png"}, cpu_only=True),
            "label": i % 2,
        }
        for i in range(n)
    ]


def test_cpu_train_step_merges_chunks_into_one_call():
    torch.manual_seed(0)
    model = TinyClassifier()
    dp = MMDataParallel(model, device_ids=[-1])
    samples = _samples(5)
    out = dp.train_step(collate(samples, samples_per_gpu=2), None)
    assert len(model.seen) == 1
    seen = model.seen[0]
    whole = collate(samples, samples_per_gpu=5)
    assert torch.equal(seen["img"], whole["img"].data[0])
    assert torch.equal(seen["label"], whole["label"])
    assert [m["name"] for m in seen["img_metas"]] == [f"{i}.png" for i in range(5)]
    expected = model(whole["img"].data[0], whole["label"])
    assert out["num_samples"] == 5
    assert torch.equal(out["loss"], expected)
    out["loss"].backward()
    assert model.fc.weight.grad is not None


def test_cpu_forward_and_val_step():
    model = TinyClassifier()
    dp = MMDataParallel(model)  # no CUDA on CPU hosts -> CPU mode
    data = collate(_samples(4), samples_per_gpu=2)
    assert dp.val_step(data) == {"names": ["0.png", "1.png", "2.png", "3.png"]}
    loss = dp(data["img"], label=data["label"])
    whole = collate(_samples(4), 4)
    assert torch.equal(loss, model(whole["img"].data[0], whole["label"]))
    assert dp.module is model


def test_missing_train_step_is_named():
    dp = MMDataParallel(nn.Linear(2, 2), device_ids=[-1])
    with pytest.raises(AttributeError, match="Linear has no train_step"):
        dp.train_step({})


@pytest.mark.cuda
def test_one_gpu_train_step_runs_on_device():
    model = TinyClassifier().cuda(0)
    dp = MMDataParallel(model, device_ids=[0])
    out = dp.train_step(collate(_samples(4), samples_per_gpu=2), None)
    assert out["loss"].is_cuda and model.seen[0]["img"].is_cuda
    assert isinstance(model.seen[0]["img_metas"], list)
    out["loss"].backward()


@pytest.mark.cuda
def test_module_on_wrong_device_is_named():
    model = TinyClassifier()
    dp = MMDataParallel(model, device_ids=[0])
    dp.module.fc.cpu()
    with pytest.raises(RuntimeError, match="'fc.weight' is on cpu"):
        dp.train_step(collate(_samples(2), 2), None)


@pytest.mark.cuda
@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 GPUs")
def test_two_gpu_train_step_weights_loss():
    model = TinyClassifier().cuda(0)
    dp = MMDataParallel(model, device_ids=[0, 1])
    data = collate(_samples(5), samples_per_gpu=3)  # chunks of 3 and 2 samples
    out = dp.train_step(data, None)
    assert out["num_samples"] == 5 and out["loss"].device.index == 0
    # The gathered loss is the per-chunk mean weighted by each chunk's num_samples.
    with torch.no_grad():
        chunk_losses = [
            model(img.cuda(0), label.cuda(0))
            for img, label in zip(data["img"].data, data["label"].data)
        ]
    expected = (3 * chunk_losses[0] + 2 * chunk_losses[1]) / 5
    assert torch.allclose(out["loss"].detach(), expected)
    out["loss"].backward()
    assert model.fc.weight.grad is not None


def test_cpu_step_passes_plain_batches_through():
    seen = []

    class Recorder(nn.Module):
        def train_step(self, data_batch, optimizer=None):
            seen.append(data_batch)
            return {}

    batch = [torch.zeros(4, 2), torch.ones(4)]
    MMDataParallel(Recorder(), device_ids=[-1]).train_step(batch, None)
    assert seen[0] == batch and all(a is b for a, b in zip(seen[0], batch))


def test_subclass_scatter_is_still_called():
    calls = []

    class Custom(MMDataParallel):
        def scatter(self, inputs, kwargs, device_ids):
            calls.append(device_ids)
            return super().scatter(inputs, kwargs, device_ids)

    model = TinyClassifier()
    out = Custom(model, device_ids=[-1]).train_step(collate(_samples(4), 2), None)
    assert calls == [[-1]] and out["num_samples"] == 4
    assert tuple(model.seen[0]["img"].shape[:1]) == (4,)


class Recorder(nn.Module):
    """Records each ``train_step`` call's batch; raises ``error`` from it when set."""

    def __init__(self, error=None):
        super().__init__()
        self.seen, self.error = [], error

    def train_step(self, data_batch, optimizer=None):
        self.seen.append(data_batch)
        if self.error is not None:
            raise self.error
        return {}


def test_cpu_step_gives_the_model_a_copy_of_a_list_batch():
    batch = [torch.zeros(4, 2), torch.ones(4)]
    model = Recorder()
    dp = MMDataParallel(model, device_ids=[-1])
    optimizer = torch.optim.SGD([torch.zeros(1, requires_grad=True)])
    for _ in range(2):  # the first step meets the optimizer's type, the second knows it
        dp.train_step(batch, optimizer)
    for seen in model.seen:
        assert seen is not batch and seen == batch
        seen.append("added by the model")
    assert len(batch) == 2  # the runner's batch is untouched, as with mmcv's scatter


@pytest.mark.parametrize(
    "batch",
    [
        [DataContainer([torch.ones(2, 3)]), torch.zeros(2)],  # unwrapped by the walk
        [torch.zeros(2), {"x": DataContainer([torch.ones(2)])}],
    ],
)
def test_cpu_step_unwraps_data_containers_in_a_list_batch(batch):
    model = Recorder()
    MMDataParallel(model, device_ids=[-1]).train_step(batch, None)
    assert not any(isinstance(x, DataContainer) for x in model.seen[0])
    assert not isinstance(model.seen[0][-1], dict) or torch.equal(
        model.seen[0][-1]["x"], torch.ones(2)
    )


def test_cpu_step_calls_the_model_once_when_it_raises_attribute_error():
    model = Recorder(error=AttributeError("raised by the model"))
    dp = MMDataParallel(model, device_ids=[-1])
    with pytest.raises(AttributeError, match="raised by the model"):
        dp.train_step([torch.zeros(2)], None)
    assert len(model.seen) == 1


def test_cpu_step_keeps_an_empty_list_batch_itself():
    batch = []
    model = Recorder()
    MMDataParallel(model, device_ids=[-1]).train_step(batch, None)
    assert model.seen[0] is batch  # empty containers are passed as they are (general path)
