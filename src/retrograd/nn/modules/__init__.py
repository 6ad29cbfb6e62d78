"""All nn layers, re-exported by ``retrograd.nn``.

Example:
    >>> import retrograd as torch
    >>> torch.nn.modules.Linear is torch.nn.Linear
    True
"""

from __future__ import annotations

from . import activation_shrink, distance, lazy, loss_margin, normalization_rms_lrn
from . import fold as _fold
from . import padding as _padding
from . import pixelshuffle as _pixelshuffle
from . import upsampling as _upsampling
from .activation import (
                         CELU,
                         ELU,
                         GELU,
                         GLU,
                         SELU,
                         Hardsigmoid,
                         Hardswish,
                         Hardtanh,
                         LeakyReLU,
                         LogSigmoid,
                         LogSoftmax,
                         Mish,
                         PReLU,
                         ReLU,
                         ReLU6,
                         Sigmoid,
                         SiLU,
                         Softmax,
                         Softmin,
                         Softplus,
                         Softsign,
                         Tanh,
                         Tanhshrink,
                         Threshold,
)
from .activation_shrink import *
from .adaptive import AdaptiveLogSoftmaxWithLoss
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .ctc import CTCLoss
from .data_parallel import DataParallel
from .deprecated import Container, NLLLoss2d
from .distance import *
from .dropout import (
                         AlphaDropout,
                         Dropout,
                         Dropout1d,
                         Dropout2d,
                         Dropout3d,
                         FeatureAlphaDropout,
)
from .flatten import Flatten, Unflatten
from .fold import *
from .fractional_pool import FractionalMaxPool2d, FractionalMaxPool3d
from .lazy import *
from .linear import Bilinear, Identity, Linear
from .loss import (
                         BCELoss,
                         BCEWithLogitsLoss,
                         CosineEmbeddingLoss,
                         CrossEntropyLoss,
                         HuberLoss,
                         KLDivLoss,
                         L1Loss,
                         MSELoss,
                         NLLLoss,
                         SmoothL1Loss,
)
from .loss_linear_ce import LinearCrossEntropyLoss, LinearCrossEntropyOptions
from .loss_margin import *
from .module import Module
from .normalization import (
                         BatchNorm1d,
                         BatchNorm2d,
                         BatchNorm3d,
                         GroupNorm,
                         InstanceNorm1d,
                         InstanceNorm2d,
                         InstanceNorm3d,
                         LayerNorm,
)
from .normalization_rms_lrn import *
from .padding import *
from .pixelshuffle import *
from .pooling import (
                         AdaptiveAvgPool1d,
                         AdaptiveAvgPool2d,
                         AdaptiveAvgPool3d,
                         AdaptiveMaxPool1d,
                         AdaptiveMaxPool2d,
                         AdaptiveMaxPool3d,
                         AvgPool1d,
                         AvgPool2d,
                         AvgPool3d,
                         LPPool1d,
                         LPPool2d,
                         LPPool3d,
                         MaxPool1d,
                         MaxPool2d,
                         MaxPool3d,
                         MaxUnpool1d,
                         MaxUnpool2d,
                         MaxUnpool3d,
)
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .sparse import Embedding, EmbeddingBag
from .sync_batchnorm import SyncBatchNorm
from .transformer import (
                         MultiheadAttention,
                         Transformer,
                         TransformerDecoder,
                         TransformerDecoderLayer,
                         TransformerEncoder,
                         TransformerEncoderLayer,
)
from .upsampling import *

__all__ = [
    "Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
    "Identity", "Linear", "Bilinear", "Flatten", "Unflatten", "Conv1d", "Conv2d", "Conv3d",
    "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "MaxPool1d", "MaxPool2d",
    "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
    "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d",
    "InstanceNorm3d", "LayerNorm", "GroupNorm", "Dropout", "Dropout1d", "Dropout2d",
    "Dropout3d", "AlphaDropout", "FeatureAlphaDropout", "Embedding", "RNNBase", "RNN", "LSTM",
    "GRU", "RNNCell", "LSTMCell", "GRUCell", "MultiheadAttention", "TransformerEncoderLayer",
    "TransformerEncoder", "ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU",
    "Mish", "Softplus", "Softsign", "Tanh", "Sigmoid", "Hardtanh", "Hardsigmoid", "Hardswish",
    "LogSigmoid", "Tanhshrink", "Threshold", "GLU", "Softmax", "Softmin", "LogSoftmax", "PReLU",
    "MSELoss", "L1Loss", "HuberLoss", "SmoothL1Loss", "CrossEntropyLoss", "NLLLoss", "BCELoss",
    "BCEWithLogitsLoss", "KLDivLoss", "CosineEmbeddingLoss", "SyncBatchNorm",
    "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
    "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "LPPool1d", "LPPool2d", "LPPool3d",
    *_fold.__all__, *_padding.__all__, *_pixelshuffle.__all__, *_upsampling.__all__,
]
__all__ += (activation_shrink.__all__ + distance.__all__ + loss_margin.__all__
            + normalization_rms_lrn.__all__)
__all__ += ["Transformer", "TransformerDecoder", "TransformerDecoderLayer", "DataParallel",
            "EmbeddingBag", "CTCLoss", "AdaptiveLogSoftmaxWithLoss", "FractionalMaxPool2d",
            "FractionalMaxPool3d", "Container", "NLLLoss2d", "RNNCellBase",
            "LinearCrossEntropyLoss", "LinearCrossEntropyOptions",
            *lazy.__all__]
