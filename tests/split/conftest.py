"""Keep torch to one thread in this family's tests (2 shared cores; tiny networks)."""

import importlib.util

if importlib.util.find_spec("torch") is not None:
    import torch

    torch.set_num_threads(1)
