"""The pieces of the ``retrograd`` command (``__main__``): ``retrograd demo`` and its
models, ``retrograd tour``, ``retrograd check``."""
