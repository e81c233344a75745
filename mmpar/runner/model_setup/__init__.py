"""Model-side set-up.

What the runner layer provides for models: weight initialisation (``init_cfg``) and
``torch.compile`` (with the state-dict key mapping compiled models need).
"""
