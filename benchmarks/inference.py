"""Images/s of multi-process CPU testing (``tools/test.py --workers N``) vs one process.

Both sides run the same model over the same dataset with the same batches, in this process
(one process: ``single_device_test`` with torch's default thread count; N workers:
``multi_process_test``, each worker with cores/N threads, worker start-up included), alternating
for several repeats; the median time is reported. The results of the two are checked equal.

    python benchmarks/inference.py --workers 2 --repeats 3
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch

from mmpar import Config
from mmpar.apis import multi_process_test, single_device_test, wrap_model
from mmpar.datasets import build_dataloader, build_dataset
from mmpar.models import build_classifier

MODELS = {
    # The Digits demo model as configured.
    "lenet": None,
    # A compute-heavier model on the same images: ResNet-18 (CIFAR stem) on 1-channel input.
    "resnet18": dict(
        type="ImageClassifier",
        backbone=dict(type="ResNet", depth=18, in_channels=1, stem="cifar"),
        neck=dict(type="GlobalAveragePooling"),
        head=dict(type="LinearClsHead", num_classes=10, in_channels=512),
    ),
}


def bench(name: str, cfg: Config, workers: int, repeats: int, times: int) -> dict:
    model_cfg = MODELS[name] or cfg.model
    torch.manual_seed(0)
    model = build_classifier(model_cfg)
    model.eval()
    dataset = build_dataset(dict(type="RepeatDataset", times=times, dataset=cfg.data.test))
    bs = cfg.data.samples_per_gpu
    loader = build_dataloader(dataset, samples_per_gpu=bs, workers_per_gpu=0, shuffle=False)
    wrapped = wrap_model(model, distributed=False)
    single_t, single1_t, multi_t = [], [], []
    threads = torch.get_num_threads()
    for _ in range(repeats):
        t0 = time.perf_counter()
        ref = single_device_test(wrapped, loader, progress=False)
        single_t.append(time.perf_counter() - t0)
        # Small models run slower with 2 intra-op threads than with 1 on a busy machine, so
        # also show one process with one thread.
        torch.set_num_threads(1)
        t0 = time.perf_counter()
        single_device_test(wrapped, loader, progress=False)
        single1_t.append(time.perf_counter() - t0)
        torch.set_num_threads(threads)
        t0 = time.perf_counter()
        got = multi_process_test(
            model, dataset, workers=workers, samples_per_gpu=bs, progress=False
        )
        multi_t.append(time.perf_counter() - t0)
        assert all(np.array_equal(np.asarray(a), np.asarray(b)) for a, b in zip(ref, got))
    n = len(dataset)
    single = n / statistics.median(single_t)
    multi = n / statistics.median(multi_t)
    single1 = n / statistics.median(single1_t)
    return dict(
        model=name,
        images=n,
        single=single,
        single1=single1,
        multi=multi,
        speedup=multi / max(single, single1),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="configs/digits_lenet.py")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--times", type=int, default=10, help="repeat the test set this often")
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    args = parser.parse_args()
    cfg = Config.fromfile(args.config)
    nt = torch.get_num_threads()
    print(
        f"| model | images | 1 process, {nt} threads (img/s) | 1 process, 1 thread (img/s) | "
        f"{args.workers} workers (img/s) | speed-up vs best single |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    for name in args.models:
        r = bench(name, cfg, args.workers, args.repeats, args.times)
        print(
            f"| {r['model']} | {r['images']} | {r['single']:.0f} | {r['single1']:.0f} | "
            f"{r['multi']:.0f} | {r['speedup']:.2f}x |"
        )


if __name__ == "__main__":
    main()
