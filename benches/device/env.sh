# Sourced by the device scripts: $OUT, libtorch from the image's PyTorch on LD_LIBRARY_PATH, the
# carried binary ($BIN) and Gset graphs ($GSET), and the GPU's name on the first line of output.
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
TORCH_LIB=$(python3 -c "import torch, os; print(os.path.join(os.path.dirname(torch.__file__), 'lib'))")
export LD_LIBRARY_PATH="$TORCH_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
BIN=./target/release/rlsolver
GSET=${GSET:-.devdata/gset}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
