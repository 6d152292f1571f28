package kernels

// Write quant_grids.h, the i-quants' lookup tables, from quant/grids/*.txt
// (see internal/gridgen; TestQuantGridsHeader keeps the two identical).
//go:generate go run ./internal/gridgen/write

// Build the code objects of every vendor whose compiler is installed: nvcc
// compiles every .cu file into one fatbin for CUDAArchs under gen/cuda,
// hipcc --genco one code object per gfx of HIPArchs under gen/hip, mcc one
// per arch of MUSAArchs under gen/musa (each embedded under its vendor's
// build tag). A missing compiler is skipped with a message, unless
// TERNION_REQUIRE_NVCC / _HIPCC / _MCC=1; TERNION_GEN_VENDORS=hip (or
// "cuda,hip") limits the vendors built. See internal/gen.
//go:generate go run ./internal/gen
