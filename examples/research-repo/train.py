import spconv.pytorch as spconv
import torch
from flash_attn import flash_attn_func
from numba import cuda

from pointnet_ops import _ext


@cuda.jit
def voxelize(points, out):
    i = cuda.grid(1)
    if i < points.shape[0]:
        out[i] = points[i]


def model():
    return spconv.SubMConv3d(16, 32, 3), flash_attn_func, _ext, torch.device("cuda")
