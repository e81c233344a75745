"""Inside the runner, torch's step runs in the state a hand-written loop gives it.

``benchmarks/step_warmth.py`` found torch's ``zero_grad``/``backward``/``step`` a few µs
slower inside the runner than in a hand loop, and traced it to the CPU's caches (any Python
work between iterations does it), not to a state the runner sets. This test keeps it that way,
without timing: in the benchmark's setting (MMDataParallel on the CPU, the default hooks),
when the optimizer hook runs, the global autograd state is the default one, the runner and the
wrapper have put no hook on the model, its parameters or the optimizer, and the hook zeroes
the gradients with the same call as the hand loop (``optimizer.zero_grad()``: set to None).
"""

import torch
import torch.optim.optimizer as torch_optimizer
from helpers.benchmark_runner import Classifier, batches, benchmark_runner

from mmpar.runner import Hook


def torch_state():
    return {
        "grad": torch.is_grad_enabled(),
        "inference": torch.is_inference_mode_enabled(),
        "anomaly": torch.is_anomaly_enabled(),
        "autocast": torch.is_autocast_enabled("cpu"),
        "profiler": torch.autograd.profiler._is_profiler_enabled,
        "optimizer pre-hooks": len(torch_optimizer._global_optimizer_pre_hooks),
        "optimizer post-hooks": len(torch_optimizer._global_optimizer_post_hooks),
    }


def hooks_on(model, optimizer):
    module_hooks = [
        len(getattr(module, name))
        for module in model.modules()
        for name in (
            "_forward_hooks",
            "_forward_pre_hooks",
            "_backward_hooks",
            "_backward_pre_hooks",
        )
    ]
    return {
        "module": sum(module_hooks),
        "parameter": sum(len(p._backward_hooks or {}) for p in model.parameters()),
        "step": len(optimizer._optimizer_step_pre_hooks)
        + len(optimizer._optimizer_step_post_hooks),
    }


class Probe(Hook):
    """Runs right before the optimizer hook at every ``after_train_iter``."""

    def __init__(self, model, optimizer):
        self.model, self.optimizer, self.seen = model, optimizer, []

    def after_train_iter(self, runner):
        self.seen.append((torch_state(), hooks_on(self.model, self.optimizer)))


def test_optimizer_hook_steps_in_a_hand_loops_torch_state(tmp_path):
    torch.manual_seed(0)
    loader = batches(4)
    model = Classifier()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    hand_state, hand_hooks = torch_state(), hooks_on(model, optimizer)
    zero_grad_calls = []
    original_zero_grad = optimizer.zero_grad

    def zero_grad(*args, **kwargs):
        zero_grad_calls.append((args, kwargs))
        original_zero_grad(*args, **kwargs)

    optimizer.zero_grad = zero_grad
    runner = benchmark_runner(model, optimizer, str(tmp_path), max_epochs=2)
    probe = Probe(model, optimizer)
    runner.register_hook(probe, priority="HIGHEST")
    runner.run([loader], [("train", 1)])
    assert len(probe.seen) == 8
    assert all(seen == (hand_state, hand_hooks) for seen in probe.seen), probe.seen[0]
    # The hand loop's call: no arguments, so torch's default (set_to_none=True).
    assert zero_grad_calls == [((), {})] * 8
