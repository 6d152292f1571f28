// Package arch encodes GPU architectures as ggml's compute-capability
// integers and answers questions about them without touching a device.
//
// A [CC] is one integer for three vendors: NVIDIA as 100*major + 10*minor
// (sm_90 → 900), AMD as [OffsetAMD] plus the gfx digits read as hexadecimal
// (gfx90a → 0x100090a), and Moore Threads as [OffsetMThreads] + major*0x100 +
// minor*0x10 (mp_22 → 0x100220). Because the encoding is ggml's, the
// thresholds and tables of ggml-cuda carry over unchanged: the family
// predicates ([CC.IsCDNA], [CC.IsRDNA3], …), the physical wave size, and the
// feature predicates ([FP16Available], [TuringMMAAvailable], [DP4AAvailable],
// …) that pick kernels from the pair (device cc, highest compiled arch).
//
// The package also reads the names the drivers and tools use for an
// architecture: gfx target ids with generic names and feature flags
// ([ParseGfx]), the decimal gfx_target_version of the amdkfd sysfs topology
// ([ParseKFDTargetVersion]), HSA_OVERRIDE_GFX_VERSION ([ParseHSAOverride],
// [HSAOverrideFor]), sm_/compute_ names ([ParseSM]) and Moore Threads mp_
// names ([ParseMP]); [Decode] accepts any of them for the command line.
//
// Everything here is a pure function. The only input from outside is the
// environment, read through a lookup function the caller passes in
// (os.LookupEnv when it passes nil).
package arch
