"""The checkpoint formats behind ``retrograd.save``/``retrograd.load`` and
``retrograd.safetensors``: PyTorch's zip format (``zip_checkpoint``), its legacy pre-1.6
format (``legacy_checkpoint``) and the crash-safe file replacement (``atomic_write``)."""
