"""The layers of braid.nn (base first: every other file builds on Module)."""

from braid.nn.layers.base import Module
from braid.nn.layers.activations import (
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    HardShrink,
    Hardswish,
    HardTanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    PReLU,
    ReLU,
    ReLU2,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Softmin,
    Softplus,
    Softshrink,
    Softsign,
    Step,
    Tanh,
    celu,
    elu,
    gelu,
    gelu_approx,
    gelu_fast_approx,
    glu,
    hard_shrink,
    hard_tanh,
    hardswish,
    leaky_relu,
    log_sigmoid,
    log_softmax,
    mish,
    prelu,
    relu,
    relu2,
    relu6,
    selu,
    sigmoid,
    silu,
    softmax,
    softmin,
    softplus,
    softshrink,
    softsign,
    step,
    tanh,
)
from braid.nn.layers.containers import Sequential
from braid.nn.layers.convolution import Conv1d, Conv2d, Conv3d
from braid.nn.layers.convolution_transpose import (
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
)
from braid.nn.layers.distributed import (
    AllToShardedLinear,
    FullyShardedModule,
    QuantizedAllToShardedLinear,
    QuantizedShardedToAllLinear,
    ShardedToAllLinear,
    fully_shard,
)
from braid.nn.layers.dropout import Dropout, Dropout2d, Dropout3d
from braid.nn.layers.embedding import Embedding
from braid.nn.layers.linear import Bilinear, Identity, Linear
from braid.nn.layers.normalization import BatchNorm, GroupNorm, InstanceNorm, LayerNorm, RMSNorm
from braid.nn.layers.pooling import (
    AvgPool1d,
    AvgPool2d,
    AvgPool3d,
    MaxPool1d,
    MaxPool2d,
    MaxPool3d,
)
from braid.nn.layers.positional_encoding import ALiBi, RoPE, SinusoidalPositionalEncoding
from braid.nn.layers.quantized import QQLinear, QuantizedEmbedding, QuantizedLinear, quantize
from braid.nn.layers.recurrent import GRU, LSTM, RNN
from braid.nn.layers.transformer import (
    MultiHeadAttention,
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)
from braid.nn.layers.upsample import Upsample
