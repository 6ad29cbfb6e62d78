"""PyTorch's CPU random numbers: the generator (``rng``, which is ``torch.random``), the
AVX kernels it imitates bit for bit (``avx_math``) and the distribution samplers
(``distributions``, ``gamma``). Above the tensor layer: a draw can make a tensor."""
