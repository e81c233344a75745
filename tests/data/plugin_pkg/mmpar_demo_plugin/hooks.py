"""Hooks of the demo plugin; importing this module registers them in mmpar's HOOKS."""

from mmpar.runner.hooks.hook import HOOKS, Hook


@HOOKS.register_module()
class MyPluginHook(Hook):
    """Counts training iterations and reports every ``interval`` of them.

    Args:
        interval: Report every this many iterations.
    """

    def __init__(self, interval: int = 1) -> None:
        self.interval = interval
        self.count = 0

    def after_train_iter(self, runner) -> None:
        """Count the iteration and log every ``interval`` iterations."""
        self.count += 1
        if self.every_n_iters(runner, self.interval):
            runner.logger.info(f"MyPluginHook: {self.count} iterations so far")

    def state_dict(self) -> dict:
        """Return the iteration count so it survives a resume."""
        return {"count": self.count}

    def load_state_dict(self, state: dict) -> None:
        """Restore the iteration count."""
        self.count = state["count"]
