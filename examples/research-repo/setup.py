from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="pointnet_ops",
    ext_modules=[CUDAExtension("pointnet_ops._ext", ["pointnet_ops/csrc/ball_query.cu", "pointnet_ops/csrc/bindings.cpp"])],
    cmdclass={"build_ext": BuildExtension},
)
