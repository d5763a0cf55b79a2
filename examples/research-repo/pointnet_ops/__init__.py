"""Ball query for point clouds (the example's own CUDA extension)."""
