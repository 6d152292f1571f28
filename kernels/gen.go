package kernels

// Build the code objects: nvcc compiles every .cu file into one fatbin for
// CUDAArchs under gen/cuda (embedded under the cuda build tag). Without nvcc
// it says so and succeeds, unless TERNION_REQUIRE_NVCC=1.
//go:generate go run ./internal/gen
