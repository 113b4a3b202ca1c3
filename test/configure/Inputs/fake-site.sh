#!/usr/bin/env bash
# Lays out a fake site-packages at $1 as pip installs torch with its CUDA
# libraries: torch/ (version.py says CUDA $2), nvidia/cudnn, nvidia/cu13
# (CUDA 13 wheels: cuBLAS with the CUDA runtime's headers), nvidia/cublas
# (CUDA 12 wheels), nvidia/nccl. Only the version macros are real; a decoy
# cuda_runtime_api.h sits beside cuBLAS's headers in nvidia/cu13.
set -euo pipefail
site=$1
cuda=${2:-13.0}
mkdir -p "$site/torch" "$site/nvidia/cudnn/include" "$site/nvidia/cudnn/lib" \
  "$site/nvidia/cu13/include" "$site/nvidia/cublas/include" "$site/nvidia/nccl/include/nccl_device"
: > "$site/torch/__init__.py"
printf "__version__ = '2.99.0'\ncuda: Optional[str] = '%s'\n" "$cuda" > "$site/torch/version.py"
printf '#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 77\n#define CUDNN_PATCHLEVEL 0\n' \
  > "$site/nvidia/cudnn/include/cudnn_version.h"
echo '#include "cudnn_version.h"' > "$site/nvidia/cudnn/include/cudnn.h"
: > "$site/nvidia/cudnn/lib/libcudnn.so.9"
printf '#define CUBLAS_VER_MAJOR 13\n#define CUBLAS_VER_MINOR 77\n#define CUBLAS_VER_PATCH 0\n' \
  > "$site/nvidia/cu13/include/cublas_api.h"
echo '#include "cublas_api.h"' > "$site/nvidia/cu13/include/cublas_v2.h"
echo '#error the CUDA runtime headers of the wheel' > "$site/nvidia/cu13/include/cuda_runtime_api.h"
printf '#define CUBLAS_VER_MAJOR 12\n#define CUBLAS_VER_MINOR 77\n#define CUBLAS_VER_PATCH 0\n' \
  > "$site/nvidia/cublas/include/cublas_api.h"
printf '#define NCCL_MAJOR 2\n#define NCCL_MINOR 77\n#define NCCL_PATCH 0\n' \
  > "$site/nvidia/nccl/include/nccl.h"
: > "$site/nvidia/nccl/include/nccl_device/coop.h"
