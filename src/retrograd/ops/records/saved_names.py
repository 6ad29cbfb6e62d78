"""PyTorch's names for what each node saves: ``grad_fn._saved_<name>`` (Note [Saved
attributes] in ops/saved_attributes.py), one entry per node name, read like the saved
arguments of PyTorch's tools/autograd/derivatives.yaml.

An entry is ``name=source[:kind]`` items. The source says where retrograd's node keeps the
value: a key of the record's ``save`` (``0``, ``1``: the saved input; ``out``, ``out1``: a
saved output; ``p0``: a tensor saved from the parameters), ``sizes0``/``numel0`` (input 0's
shape or element count, as its edge recorded it), or a path into the node's parameters
(``p``, ``p[1]``, ``p[2][0]``; ``|1``: 1 where the parameter is None). The kind converts
it to PyTorch's type: ``tensor`` (the default for saved values), ``ints`` (a tuple of ints,
the default for sizes; ``optints``: the same, but None stays None), ``int``, ``num`` (an int
or a float as given), ``float``, ``bool``, ``str``.

Example:
    >>> SAVED_NAMES["MulBackward0"]
    'other=1 self=0'
"""

from __future__ import annotations

__all__ = ["SAVED_NAMES", "UNAVAILABLE"]

#: node name -> its saved attributes (the module docstring gives the syntax)
SAVED_NAMES: dict = {
    "UpsampleLanczos2DAaBackward0":
        "align_corners=p[1][1]:bool output_size=p[1][0]:ints scales_h=p[1][2][0]:float "
        "scales_w=p[1][2][1]:float self_sym_sizes=sizes0",
    "SafeSoftmaxBackward0": "dim=p:int result=out",
    "ScaledDotProductFlashAttentionForCpuBackward0":
        "attn_mask=p0 dropout_p=p[5]:float is_causal=p[1]:bool key=1 output=out query=0 "
        "scale=p[4]:float value=2",
    "UpsampleNearest1DBackward0":
        "output_size=p[1][0]:ints "
        "scales=p[1][2][0]:float self_sym_sizes=sizes0",
    "UpsampleNearest2DBackward0":
        "output_size=p[1][0]:ints scales_h=p[1][2][0]:float "
        "scales_w=p[1][2][1]:float self_sym_sizes=sizes0",
    "UpsampleNearest3DBackward0":
        "output_size=p[1][0]:ints scales_d=p[1][2][0]:float "
        "scales_h=p[1][2][1]:float scales_w=p[1][2][2]:float self_sym_sizes=sizes0",
    "UpsampleNearestExact1DBackward0":
        "output_size=p[1][0]:ints "
        "scales=p[1][2][0]:float self_sym_sizes=sizes0",
    "UpsampleNearestExact2DBackward0":
        "output_size=p[1][0]:ints scales_h=p[1][2][0]:float "
        "scales_w=p[1][2][1]:float self_sym_sizes=sizes0",
    "UpsampleNearestExact3DBackward0":
        "output_size=p[1][0]:ints scales_d=p[1][2][0]:float "
        "scales_h=p[1][2][1]:float scales_w=p[1][2][2]:float self_sym_sizes=sizes0",
    "UpsampleLinear1DBackward0":
        "align_corners=p[1][1]:bool output_size=p[1][0]:ints "
        "scales=p[1][2][0]:float self_sym_sizes=sizes0",
    "UpsampleBilinear2DBackward0":
        "align_corners=p[1][1]:bool output_size=p[1][0]:ints "
        "scales_h=p[1][2][0]:float scales_w=p[1][2][1]:float self_sym_sizes=sizes0",
    "UpsampleBicubic2DBackward0":
        "align_corners=p[1][1]:bool output_size=p[1][0]:ints "
        "scales_h=p[1][2][0]:float scales_w=p[1][2][1]:float self_sym_sizes=sizes0",
    "UpsampleTrilinear3DBackward0":
        "align_corners=p[1][1]:bool output_size=p[1][0]:ints scales_d=p[1][2][0]:float "
        "scales_h=p[1][2][1]:float scales_w=p[1][2][2]:float self_sym_sizes=sizes0",
    "UpsampleBilinear2DAaBackward0":
        "align_corners=p[1][1]:bool output_size=p[1][0]:ints "
        "scales_h=p[1][2][0]:float scales_w=p[1][2][1]:float self_sym_sizes=sizes0",
    "UpsampleBicubic2DAaBackward0":
        "align_corners=p[1][1]:bool output_size=p[1][0]:ints "
        "scales_h=p[1][2][0]:float scales_w=p[1][2][1]:float self_sym_sizes=sizes0",
    "AdaptiveAvgPool2DBackward0": "self=0",
    "AdaptiveAvgPool3DBackward0": "self=0",
    "NativeBatchNormBackward0":
        "eps=p[5]:float input=0 result1=p0 result2=p1 running_mean=p2 running_var=p3 "
        "training=p[4]:bool weight=1",
    "NativeGroupNormBackward0":
        "C=p[5]:int HxW=p[6]:int N=p[4]:int eps=p[3]:float group=p[2]:int input=0 "
        "result1=p0 result2=p1 weight=1",
    "MseLossBackward0": "reduction=p[0]:int self=0 target=1",
    "MseLossBackwardBackward0":
        "grad_output=0 reduction=p[0]:int self=1 target=2",
    "HuberLossBackward0": "delta=p[1]:float reduction=p[0]:int self=0 target=1",
    "HuberLossBackwardBackward0":
        "delta=p[1]:float grad_output=0 reduction=p[0]:int self=1 target=2",
    "SmoothL1LossBackward0": "beta=p[1]:float reduction=p[0]:int self=0 target=1",
    "SmoothL1LossBackwardBackward0":
        "beta=p[1]:float grad_output=0 reduction=p[0]:int self=1 target=2",
    "BinaryCrossEntropyBackward0": "reduction=p[0]:int self=0 target=1 weight=p1",
    "BinaryCrossEntropyBackwardBackward0":
        "grad_output=0 reduction=p[0]:int self=1 target=2 weight=p1",
    "BinaryCrossEntropyWithLogitsBackward0":
        "pos_weight=p2 reduction=p[0]:int self=0 target=1 weight=p1",
    "MulBackward0": "other=1 self=0",
    "AbsBackward0": "self=0",
    "AcosBackward0": "self=0",
    "AcoshBackward0": "self=0",
    "AdaptiveMaxPool2DBackward0": "result1=1",
    "AdaptiveMaxPool3DBackward0": "result1=1",
    "AddBackward0": "alpha=p|1:num",
    "AddbmmBackward0": "alpha=p[1]:num batch1=1 batch2=2 beta=p[0]:num",
    "AddmmBackward0":
        "alpha=p[1]:num beta=p[0]:num mat1=1 mat1_sym_sizes=sizes1 mat2=2 mat2_sym_sizes=sizes2",
    "AddmvBackward0": "alpha=p[1]:num beta=p[0]:num mat=1 vec=2",
    "AddrBackward0": "alpha=p[1]:num beta=p[0]:num vec1=1 vec2=2",
    "AmaxBackward0": "dim=p[0]:ints keepdim=p[1]:bool result=out self=0",
    "AminBackward0": "dim=p[0]:ints keepdim=p[1]:bool result=out self=0",
    "AsStridedScatterBackward0": "size=sizes1 stride=p[1]:ints",
    "AsinBackward0": "self=0",
    "AsinhBackward0": "self=0",
    "Atan2Backward0": "other=1 self=0",
    "AtanBackward0": "self=0",
    "AtanhBackward0": "self=0",
    "BaddbmmBackward0": "alpha=p[1]:num batch1=1 batch2=2 beta=p[0]:num",
    "BmmBackward0": "mat2=1 self=0",
    "CatBackward0": "dim=p[0]:int",
    "CdistBackward0": "p=p:float result=out x1=0 x2=1",
    "ChannelShuffleBackward0": "groups=p[0]:int",
    "CholeskyBackward0": "result=out upper=p:bool",
    "CholeskyInverseBackward0": "result=out self=0 upper=p:bool",
    "CholeskySolveBackward0": "input2=1 result=out upper=p:bool",
    "ClampBackward0": "max=2 min=1 self=0",
    "ClampBackward1": "max=p[1]:num min=p[0]:num self=0",
    "ClampMaxBackward0": "max=p[1]:float self=0",
    "ClampMinBackward0": "min=p[0]:float self=0",
    "Col2ImBackward0":
        "dilation=p[1]:ints kernel_size=p[0]:ints padding=p[2][0]:ints stride=p[3]:ints",
    "CopysignBackward0": "result=out self=0",
    "CopysignBackward1": "result=out self=0",
    "CosBackward0": "self=0",
    "CoshBackward0": "self=0",
    "CtcLossBackward0":
        "blank=p[2]:int input_lengths=p[0]:ints log_probs=0 result0=out target_lengths=p[1]:ints "
        "zero_infinity=p[3]:bool",
    "CummaxBackward0": "dim=p[0]:int indices=p1",
    "CumminBackward0": "dim=p[0]:int indices=p1",
    "CumprodBackward0": "dim=p[0]:int result=out self=0",
    "CumsumBackward0": "dim=p[0]:int",
    "DiagEmbedBackward0": "dim1=p[1]:int dim2=p[2]:int offset=p[0]:int",
    "DiagonalBackward0": "dim1=p[1]:int dim2=p[2]:int offset=p[0]:int self_sym_sizes=sizes0",
    "DiagonalBackward0_copy": "self_sym_sizes=sizes0",
    "DiagonalScatterBackward0": "dim1=p[1]:int dim2=p[2]:int offset=p[0]:int",
    "DigammaBackward0": "self=0",
    "DivBackward0": "other=1 self=0",
    "DotBackward0": "self=0 tensor=1",
    "ErfBackward0": "self=0",
    "ErfcBackward0": "self=0",
    "EuclideanDistBackward0": "result=out x1=0 x2=1",
    "Exp2Backward0": "result=out",
    "ExpBackward0": "result=out",
    "ExpandBackward0": "self_sym_sizes=sizes0",
    "ExpandBackward0_copy": "self_sym_sizes=sizes0",
    "Expm1Backward0": "result=out",
    "FlipBackward0": "dims=p:ints",
    "FmodBackward1": "other=1 self=0",
    "FrexpBackward0": "exponent=p0",
    "GatherBackward0": "dim=p:int index=1",
    "HardshrinkBackward0": "lambd=p[0]:float self=0",
    "HypotBackward0": "other=1 result=out self=0",
    "I0Backward0": "self=0",
    "IgammaBackward0": "other=1 self=0",
    "IgammacBackward0": "other=1 self=0",
    "Im2ColBackward0":
        "dilation=p[1]:ints kernel_size=p[0]:ints padding=p[2][0]:ints "
        "self_sym_argsize_minus_1=p[4][1]:int self_sym_argsize_minus_2=p[4][0]:int "
        "stride=p[3]:ints",
    "IndexAddBackward0": "alpha=p[1]:num dim=p[0]:int index=1",
    "IndexBackward0": "self_sym_sizes=sizes0",
    "IndexFillBackward0": "dim=p[0]:int",
    "IndexFillBackward1": "dim=p[0]:int",
    "IndexPutBackward0": "accumulate=p[1]:bool",
    "IndexReduceBackward0":
        "dim=p[0]:int include_self=p[2]:bool index=1 reduce=p[1]:str result=out self=0 source=2",
    "IndexSelectBackward0": "dim=p:int index=1 self_sym_sizes=sizes0",
    "KthvalueBackward0": "dim=p[0]:int indices=p2 keepdim=p[1]:bool self_sym_sizes=sizes0",
    "LdexpBackward0": "other=1 result=out",
    "LerpBackward0": "weight=p:float",
    "LerpBackward1": "end=1 self=0 weight=2",
    "LgammaBackward0": "self=0",
    "LinalgCholeskyExBackward0": "L=out upper=p:bool",
    "LinalgCrossBackward0": "dim=p:int other=1 self=0",
    "LinalgDetBackward0": "A=0 result=out",
    "LinalgEighBackward0": "eigenvalues=out",
    "LinalgHouseholderProductBackward0": "input=0 tau=1",
    "LinalgInvExBackward0": "inverse=out",
    "LinalgLstsqBackward0": "b=1 self=0 solution=out",
    "LinalgLuBackward0": "L=out1 P=out U=out2 pivot=p:bool",
    "LinalgLuFactorExBackward0": "LU=out pivots=out1",
    "LinalgLuSolveBackward0": "LU=0 adjoint=p[1]:bool left=p[0]:bool pivots=1 result=out",
    "LinalgMatrixExpBackward0": "self=0",
    "LinalgPinvBackward0": "result=out self=0",
    "LinalgQrBackward0": "Q=out R=out1 mode=p:str",
    "LinalgSlogdetBackward0": "A=0",
    "LinalgSolveExBackward0": "A=0 left=p[0]:bool result=out",
    "LinalgSolveTriangularBackward0":
        "left=p[1]:bool result=out self=0 unitriangular=p[2]:bool upper=p[0]:bool",
    "LinalgSvdBackward0": "S=out1 full_matrices=p:bool",
    "LinalgVectorNormBackward0": "dim=p[0]:optints keepdim=p[1]:bool result=out self=0",
    "Log10Backward0": "self=0",
    "Log1PBackward0": "self=0",
    "Log2Backward0": "self=0",
    "LogBackward0": "self=0",
    "LogSoftmaxBackward0": "dim=p:int result=out",
    "Logaddexp2Backward0": "other=1 self=0",
    "LogaddexpBackward0": "other=1 self=0",
    "LogcumsumexpBackward0": "dim=p[0]:int result=out self=0",
    "LogitBackward0": "self=0",
    "LogsumexpBackward0": "dim=p[0]:ints keepdim=p[1]:bool result=out self=0",
    "MaskedFillBackward0": "mask=p0",
    "MaskedFillBackward1": "mask=p0",
    "MaskedScatterBackward0": "source_sym_sizes=sizes2",
    "MaskedSelectBackward0": "mask=p0 self=0",
    "MaxBackward0": "dim=p[0]:int indices=1 keepdim=p[1]:bool self_sym_sizes=sizes0",
    "MaxBackward1": "result=out self=0",
    "MaxPool3DWithIndicesBackward0": "result1=1",
    "MaxUnpool2DBackward0": "indices=1",
    "MaxUnpool3DBackward0": "indices=1",
    "FmaxBackward0": "other=1 self=0",
    "FminBackward0": "other=1 self=0",
    "MaximumBackward0": "other=1 self=0",
    "MeanBackward0": "self_sym_numel=numel0 self_sym_sizes=sizes0",
    "MeanBackward1": "dim=p[0]:ints keepdim=p[1]:bool self_sym_numel=numel0 self_sym_sizes=sizes0",
    "MedianBackward0": "result=out self=0",
    "MedianBackward1": "dim=p[0]:int indices=p2 keepdim=p[1]:bool self_sym_sizes=sizes0",
    "MinBackward0": "dim=p[0]:int indices=1 keepdim=p[1]:bool self_sym_sizes=sizes0",
    "MinBackward1": "result=out self=0",
    "MinimumBackward0": "other=1 self=0",
    "MmBackward0": "mat2=1 mat2_sym_sizes=sizes1 self=0 self_sym_sizes=sizes0",
    "ModeBackward0": "dim=p[0]:int indices=1 self_sym_sizes=sizes0",
    "MulBackward1": "other=p:num",
    "MultiMarginLossBackward0": "margin=p[3]:float p=p[2]:int self=0 target=1 weight=2",
    "MultilabelMarginLossBackward0": "self=0 target=1",
    "MvBackward0": "self=0 vec=1",
    "MvlgammaBackward0": "p=p:int self=0",
    "NanToNumBackward0": "self=0",
    "NanmedianBackward0": "result=out self=0",
    "NanmedianBackward1": "dim=p[0]:int indices=p2 self_sym_sizes=sizes0",
    "NarrowCopyBackward0": "self_sym_sizes=sizes0",
    "NextafterBackward0": "other=1 self=0",
    "PdistBackward0": "p=p:float result=out self=0",
    "PermuteBackward0": "dims=p:ints",
    "PixelShuffleBackward0": "upscale_factor=p[0]:int",
    "PixelUnshuffleBackward0": "downscale_factor=p[0]:int",
    "PolygammaBackward0": "n=p:int self=0",
    "PolygammaBackward1": "n=p:int self=0",
    "PowBackward0": "exponent=1:num self=0",
    "PowBackward1": "exponent=1 result=out self=0",
    "PowBackward2": "exponent=1 result=out self=0:num",
    "PreluKernelBackward0": "self=0 weight=1",
    "ProdBackward0": "result=out self=0",
    "ProdBackward1": "keepdim=p[1]:bool result=out self=0",
    "PutBackward0": "accumulate=p[0]:bool",
    "ReciprocalBackward0": "result=out",
    "ReluBackward0": "result=out",
    "RemainderBackward1": "other=1 self=0",
    "RenormBackward0": "dim=p[1]:int maxnorm=p[2]:float self=0",
    "RepeatBackward0": "repeats=p:ints self_sym_sizes=sizes0",
    "ReshapeAliasBackward0": "self_sym_sizes=sizes0",
    "RollBackward0": "dims=p[1]:ints shifts=p[0]:ints",
    "Rot90Backward0": "dims=p[1]:ints k=p[0]:int",
    "RreluWithNoiseBackward0": "self=0",
    "RreluWithNoiseBackward1": "result=out",
    "RsqrtBackward0": "result=out",
    "RsubBackward0": "alpha=p:num",
    "RsubBackward1": "alpha=p|1:num",
    "ScatterAddBackward0": "dim=p[0]:int index=1",
    "ScatterBackward0": "dim=p[0]:int index=1",
    "ScatterBackward1": "dim=p[0]:int index=1",
    "ScatterReduceBackward0":
        "dim=p[0]:int include_self=p[2]:bool index=1 reduce=p[1]:str result=out self=0 src=2",
    "SelectBackward0": "self_sym_sizes=sizes0",
    "SelectBackward0_copy": "self_sym_sizes=sizes0",
    "SigmoidBackward0": "result=out",
    "SinBackward0": "self=0",
    "SincBackward0": "self=0",
    "SinhBackward0": "self=0",
    "SliceBackward0": "self_sym_sizes=sizes0",
    "SliceBackward0_copy": "self_sym_sizes=sizes0",
    "SoftMarginLossBackward0": "self=0 target=1",
    "SoftshrinkBackward0": "lambd=p[0]:float self=0",
    "SortBackward0": "dim=p[0]:int indices=1 self_sym_sizes=sizes0",
    "SpecialEntrBackward0": "self=0",
    "SpecialErfcxBackward0": "result=out self=0",
    "SpecialI0EBackward0": "result=out self=0",
    "SpecialI1Backward0": "result=out self=0",
    "SpecialI1EBackward0": "result=out self=0",
    "SpecialLogNdtrBackward0": "result=out self=0",
    "SpecialNdtriBackward0": "result=out",
    "SpecialXlog1PyBackward0": "other=1 self=0",
    "SpecialXlog1PyBackward1": "other=1 self=0:float",
    "SpecialXlog1PyBackward2": "other=1:float self=0",
    "SpecialZetaBackward0": "other=1 self=0",
    "SpecialZetaBackward1": "other=1 self=0:float",
    "SplitBackward0": "dim=p[1]:int self_sym_sizes=sizes0 split_size=p[2][0]:int",
    "SplitBackward0_copy": "self_sym_sizes=sizes0",
    "SplitWithSizesBackward0": "dim=p[1]:int self_sym_sizes=sizes0 split_sizes=p[2]:ints",
    "SplitWithSizesBackward0_copy": "self_sym_sizes=sizes0",
    "SqrtBackward0": "result=out",
    "SqueezeBackward0": "self_sym_sizes=sizes0",
    "SqueezeBackward0_copy": "self_sym_sizes=sizes0",
    "SqueezeBackward1": "self_sym_sizes=sizes0",
    "SqueezeBackward1_copy": "self_sym_sizes=sizes0",
    "SqueezeBackward2": "dim=p:ints self_sym_sizes=sizes0",
    "SqueezeBackward2_copy": "self_sym_sizes=sizes0",
    "SqueezeBackward3": "self_sym_sizes=sizes0",
    "SqueezeBackward4": "dim=p[0]:int self_sym_sizes=sizes0",
    "SqueezeBackward5": "self_sym_sizes=sizes0",
    "StackBackward0": "dim=p:int",
    "StandardGammaBackward0": "result=out self=0",
    "StdBackward0": "dim=p[0]:optints keepdim=p[1]:bool result=out self=0",
    "SubBackward0": "alpha=p|1:num",
    "SumBackward0": "self_sym_sizes=sizes0",
    "SumBackward1": "dim=p[0]:ints keepdim=p[1]:bool self_sym_sizes=sizes0",
    "TanBackward0": "result=out",
    "TanhBackward0": "result=out",
    "TopkBackward0": "dim=p[0]:int indices=1 self_sym_sizes=sizes0",
    "TransposeBackward0": "dim0=p[0]:int dim1=p[1]:int",
    "TransposeBackward1": "dim0=p[0]:int dim1=p[1]:int",
    "TriangularSolveBackward0":
        "A=1 solution=out transpose=p[1]:bool unitriangular=p[2]:bool upper=p[0]:bool",
    "UnbindBackward0": "dim=p[1]:int",
    "UnfoldBackward0": "dimension=p[0]:int self_sym_sizes=sizes0 size=p[1]:int step=p[2]:int",
    "UnfoldBackward0_copy": "self_sym_sizes=sizes0",
    "UnsafeSplitBackward0": "dim=p[1]:int self_sym_sizes=sizes0 split_size=p[2][0]:int",
    "UnsafeSplitWithSizesBackward0": "dim=p[1]:int self_sym_sizes=sizes0 split_sizes=p[2]:ints",
    "UnsafeViewBackward0": "self_sym_sizes=sizes0",
    "UnsqueezeBackward0": "dim=p:int",
    "UnsqueezeBackward1": "dim=p:int",
    "VarBackward0": "dim=p[0]:optints keepdim=p[1]:bool self=0",
    "VdotBackward0": "other=1 self=0",
    "ViewBackward0": "self_sym_sizes=sizes0",
    "ViewBackward0_copy": "self_sym_sizes=sizes0",
    "WhereBackward0": "condition=0",
    "XlogyBackward0": "other=1 self=0",
    "XlogyBackward1": "other=1 self=0:float",
    "XlogyBackward2": "other=1:float self=0",
}

# Note [Saved values PyTorch names and retrograd cannot give]
# The names below are PyTorch's saved attributes of these nodes that retrograd's node does
# not hold as PyTorch does (strides it never records, an LU factorisation it never makes,
# parameters it keeps in another form): reading one raises AttributeError, as reading a
# name the node does not have.
#: node name -> PyTorch's saved attribute names that retrograd does not give
UNAVAILABLE: dict = {
    "ScaledDotProductFlashAttentionForCpuBackward0": "logsumexp",
    "AdaptiveMaxPool2DBackward0": "self",
    "AdaptiveMaxPool3DBackward0": "self",
    "AddbmmBackward0": "batch1_sym_argsize_0 batch1_sym_argsize_1 batch2_sym_argsize_2",
    "AddmmBackward0": "mat1_sym_strides mat2_sym_strides",
    "AsStridedBackward0": "size storage_offset stride",
    "AsStridedBackward0_copy": "size storage_offset stride",
    "AsStridedScatterBackward0": "storage_offset",
    "CholeskySolveBackward0": "self",
    "CtcLossBackward0": "result1 targets",
    "CummaxBackward0": "self",
    "CumminBackward0": "self",
    "DiagonalBackward0_copy": "dim1 dim2 offset",
    "DivBackward1": "other",  # (the divisor of an internal division, an int or a float)
    "DivBackward2": "other rounding_mode self",
    "ErfinvBackward0": "self",
    "GatherBackward0": "self sparse_grad",
    "IndexAddBackward0": "source source_dim",
    "IndexBackward0": "indices",
    "IndexFillBackward0": "index",
    "IndexFillBackward1": "index",
    "IndexPutBackward0": "indices",
    "LinalgDetBackward0": "LU pivots",
    "LinalgEighBackward0": "eigenvectors",
    "LinalgHouseholderProductBackward0": "result",
    "LinalgLuFactorExBackward0": "pivot",
    "LinalgSlogdetBackward0": "LU pivots sign",
    "LinalgSolveExBackward0": "LU pivots",
    "LinalgSvdBackward0": "S_sym_argsize_minus_1 U Vh",
    "LinalgVectorNormBackward0": "ord",  # (kept as a float: PyTorch gives the number as passed)
    "LogitBackward0": "eps",
    "LuUnpackBackward0": "LU_data_sym_argsize_minus_1 LU_data_sym_argsize_minus_2",
    "MaskedScatterBackward0": "mask",
    "MaxPool3DWithIndicesBackward0": "ceil_mode dilation kernel_size padding self stride",
    "MmBackward0": "mat2_sym_strides self_sym_strides",
    "ModeBackward0": "keepdim",
    "MultiMarginLossBackward0": "reduction",
    "MultilabelMarginLossBackward0": "is_target reduction",
    "NanmedianBackward1": "keepdim",
    "NarrowCopyBackward0": "dim length start",
    "PermuteBackward0_copy": "dims",
    "ProdBackward1": "dim",
    "PutBackward0": "index source",
    "RenormBackward0": "p",  # (kept as a float, as above)
    "RreluWithNoiseBackward0": "lower noise training upper",
    "RreluWithNoiseBackward1": "lower noise training upper",
    "SelectBackward0": "dim index",
    "SelectBackward0_copy": "dim index",
    "SelectScatterBackward0": "dim index",
    "SgnBackward0": "result self",
    "SliceBackward0": "dim end start step",
    "SliceBackward0_copy": "dim end start step",
    "SliceScatterBackward0": "dim end start step",
    "SoftMarginLossBackward0": "reduction",
    "SplitBackward0_copy": "dim split_size",
    "SplitWithSizesBackward0_copy": "dim split_sizes",
    "SqueezeBackward1": "dim",
    "SqueezeBackward1_copy": "dim",
    "SqueezeBackward2_copy": "dim",
    "SqueezeBackward5": "dim",
    "StdBackward0": "correction",
    "TransposeBackward0_copy": "dim0 dim1",
    "TriangularSolveBackward0": "self",
    "UnbindBackward0_copy": "dim",
    "UnfoldBackward0_copy": "dimension size step",
    "UnsqueezeBackward0_copy": "dim",
    "VarBackward0": "correction",
}
