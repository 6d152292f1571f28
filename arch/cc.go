package arch

import (
	"fmt"
	"strings"
)

// CC is a compute capability in ggml's encoding: NVIDIA values lie below
// [OffsetMThreads], Moore Threads values in [OffsetMThreads, OffsetAMD), AMD
// values at or above [OffsetAMD].
type CC int

// Vendor is the GPU vendor a [CC] belongs to. The zero value is no vendor.
type Vendor int

// The vendors a [CC] can encode.
const (
	VendorNVIDIA   Vendor = iota + 1 // CUDA devices
	VendorAMD                        // HIP/ROCm devices
	VendorMThreads                   // Moore Threads MUSA devices
)

// String returns "nvidia", "amd" or "mthreads" ("unknown" for anything else).
func (v Vendor) String() string {
	switch v {
	case VendorNVIDIA:
		return "nvidia"
	case VendorAMD:
		return "amd"
	case VendorMThreads:
		return "mthreads"
	}
	return "unknown"
}

// MarshalText encodes the vendor as its String, so JSON shows "amd" rather than 2.
func (v Vendor) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// UnmarshalText is the inverse of MarshalText; it accepts what [ParseVendor] accepts.
func (v *Vendor) UnmarshalText(b []byte) error {
	p, err := ParseVendor(string(b))
	if err != nil {
		return err
	}
	*v = p
	return nil
}

// ParseVendor reads a vendor name: "nvidia" (or "cuda"), "amd" (or "hip",
// "rocm"), "mthreads" (or "musa"), in any case.
func ParseVendor(s string) (Vendor, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "nvidia", "cuda", "nv":
		return VendorNVIDIA, nil
	case "amd", "hip", "rocm":
		return VendorAMD, nil
	case "mthreads", "musa", "mt":
		return VendorMThreads, nil
	}
	return 0, &ParseError{What: "vendor", Input: s, Reason: "want nvidia, amd or mthreads"}
}

// Vendor offsets: AMD and Moore Threads values are shifted above every NVIDIA value.
const (
	OffsetAMD      CC = 0x1000000 // added to every AMD value
	OffsetMThreads CC = 0x100000  // added to every Moore Threads value
)

// NVIDIA architectures (100*major + 10*minor).
const (
	Pascal      CC = 600  // sm_60, minimum for fp16
	DP4A        CC = 610  // sm_61, minimum for __dp4a (and slow fp16 arithmetic)
	Volta       CC = 700  // sm_70, first tensor cores
	Turing      CC = 750  // sm_75, minimum for the mma.sync kernels ("new"/Turing MMA)
	Ampere      CC = 800  // sm_80, bf16 MMA, cp.async; minimum for CUDA graphs in the seed
	AdaLovelace CC = 890  // sm_89
	Hopper      CC = 900  // sm_90
	Blackwell   CC = 1200 // sm_120 (consumer Blackwell, ggml's BLACKWELL)
	DGXSpark    CC = 1210 // sm_121 (GB10)
	Rubin       CC = 1300 // sm_130
)

// AMD architectures ([OffsetAMD] + gfx digits read as hex).
const (
	GCN4    CC = OffsetAMD + 0x803  // gfx803: Tonga, Fiji, Polaris
	Vega    CC = OffsetAMD + 0x900  // gfx900: Vega 56/64
	Vega20  CC = OffsetAMD + 0x906  // gfx906: MI50, Radeon VII; first with sdot4 (dp4a)
	CDNA1   CC = OffsetAMD + 0x908  // gfx908: MI100, first with MFMA
	CDNA2   CC = OffsetAMD + 0x90a  // gfx90a: MI210/MI250
	CDNA3   CC = OffsetAMD + 0x942  // gfx942: MI300
	CDNA4   CC = OffsetAMD + 0x950  // gfx950: MI350/MI355
	RDNA1   CC = OffsetAMD + 0x1010 // gfx1010: RX 5000, wave32 from here on
	RDNA2   CC = OffsetAMD + 0x1030 // gfx1030: RX 6000
	RDNA3   CC = OffsetAMD + 0x1100 // gfx1100: RX 7000, first with WMMA
	RDNA3_5 CC = OffsetAMD + 0x1150 // gfx1150: Ryzen AI 300 / AI Max iGPUs
	RDNA4   CC = OffsetAMD + 0x1200 // gfx1200: RX 9000
)

// Moore Threads architectures ([OffsetMThreads] + major*0x100 + minor*0x10).
const (
	QY1 CC = OffsetMThreads + 0x210 // mp_21: MTT S80, S3000
	QY2 CC = OffsetMThreads + 0x220 // mp_22: MTT S4000
	PH1 CC = OffsetMThreads + 0x310 // mp_31: MTT S5000
)

// NVIDIA encodes an NVIDIA compute capability major.minor as 100*major + 10*minor.
func NVIDIA(major, minor int) CC { return CC(100*major + 10*minor) }

// AMD encodes an AMD major.minor as OffsetAMD + major*0x100 + minor*0x10, the
// seed's fallback when the gfx name cannot be read; the stepping is lost.
func AMD(major, minor int) CC { return OffsetAMD + CC(major*0x100+minor*0x10) }

// MThreads encodes a Moore Threads compute capability as OffsetMThreads +
// major*0x100 + minor*0x10.
func MThreads(major, minor int) CC { return OffsetMThreads + CC(major*0x100+minor*0x10) }

// Vendor reports which vendor's encoding c is in.
func (c CC) Vendor() Vendor {
	switch {
	case c >= OffsetAMD:
		return VendorAMD
	case c >= OffsetMThreads:
		return VendorMThreads
	}
	return VendorNVIDIA
}

// IsNVIDIA reports whether c is an NVIDIA value (below OffsetMThreads).
func (c CC) IsNVIDIA() bool { return c < OffsetMThreads }

// IsAMD reports whether c is an AMD value (at or above OffsetAMD).
func (c CC) IsAMD() bool { return c >= OffsetAMD }

// IsMThreads reports whether c is a Moore Threads value.
func (c CC) IsMThreads() bool { return c >= OffsetMThreads && c < OffsetAMD }

// IsGCN reports an AMD GCN part: above OffsetAMD and below CDNA1 (gfx8 and
// gfx900–gfx907, which includes Vega).
func (c CC) IsGCN() bool { return c > OffsetAMD && c < CDNA1 }

// IsCDNA reports an AMD value in [CDNA1, RDNA1). Like ggml this is a numeric
// range, so APUs such as gfx90c fall inside it.
func (c CC) IsCDNA() bool { return c >= CDNA1 && c < RDNA1 }

// IsCDNA1 reports an AMD value in [CDNA1, CDNA2).
func (c CC) IsCDNA1() bool { return c >= CDNA1 && c < CDNA2 }

// IsCDNA2 reports an AMD value in [CDNA2, CDNA3).
func (c CC) IsCDNA2() bool { return c >= CDNA2 && c < CDNA3 }

// IsCDNA3 reports an AMD value in [CDNA3, CDNA4).
func (c CC) IsCDNA3() bool { return c >= CDNA3 && c < CDNA4 }

// IsCDNA4 reports an AMD value in [CDNA4, RDNA1).
func (c CC) IsCDNA4() bool { return c >= CDNA4 && c < RDNA1 }

// IsRDNA reports an AMD value at or above RDNA1.
func (c CC) IsRDNA() bool { return c >= RDNA1 }

// IsRDNA1 reports an AMD value in [RDNA1, RDNA2).
func (c CC) IsRDNA1() bool { return c >= RDNA1 && c < RDNA2 }

// IsRDNA2 reports an AMD value in [RDNA2, RDNA3).
func (c CC) IsRDNA2() bool { return c >= RDNA2 && c < RDNA3 }

// IsRDNA3 reports an AMD value in [RDNA3, RDNA4). As in ggml this includes
// RDNA 3.5; use IsRDNA3_0 for the RDNA3 parts without it.
func (c CC) IsRDNA3() bool { return c >= RDNA3 && c < RDNA4 }

// IsRDNA3_0 reports an AMD value in [RDNA3, RDNA3_5).
func (c CC) IsRDNA3_0() bool { return c >= RDNA3 && c < RDNA3_5 }

// IsRDNA3_5 reports an AMD value in [RDNA3_5, RDNA4).
func (c CC) IsRDNA3_5() bool { return c >= RDNA3_5 && c < RDNA4 }

// IsRDNA4 reports an AMD value at or above RDNA4.
func (c CC) IsRDNA4() bool { return c >= RDNA4 }

// IsQY1 reports a Moore Threads value in [QY1, QY2).
func (c CC) IsQY1() bool { return c >= QY1 && c < QY2 }

// IsQY2 reports a Moore Threads value in [QY2, PH1).
func (c CC) IsQY2() bool { return c >= QY2 && c < PH1 }

// IsPH1 reports a Moore Threads value at or above PH1.
func (c CC) IsPH1() bool { return c >= PH1 && c < OffsetAMD }

// Family names the architecture family: for NVIDIA "Kepler", "Maxwell",
// "Pascal", "Volta", "Turing", "Ampere", "AdaLovelace", "Hopper", "Blackwell"
// (sm_100 up to sm_12x) or "Rubin" ("pre-Kepler" below sm_30); for AMD "GCN",
// "CDNA1".."CDNA4", "RDNA1", "RDNA2", "RDNA3", "RDNA3_5" or "RDNA4"; for
// Moore Threads "QY1", "QY2" or "PH1". Values no family covers give "unknown".
func (c CC) Family() string {
	switch c.Vendor() {
	case VendorNVIDIA:
		return nvidiaFamily(c)
	case VendorAMD:
		return amdFamily(c)
	}
	switch {
	case c.IsQY1():
		return "QY1"
	case c.IsQY2():
		return "QY2"
	case c.IsPH1():
		return "PH1"
	}
	return "unknown"
}

func nvidiaFamily(c CC) string {
	switch {
	case c <= 0:
		return "unknown"
	case c < 300:
		return "pre-Kepler"
	case c < 500:
		return "Kepler"
	case c < Pascal:
		return "Maxwell"
	case c < Volta:
		return "Pascal"
	case c < Turing:
		return "Volta"
	case c < Ampere:
		return "Turing"
	case c < AdaLovelace:
		return "Ampere"
	case c < Hopper:
		return "AdaLovelace"
	case c < 1000:
		return "Hopper"
	case c < Rubin:
		return "Blackwell"
	}
	return "Rubin"
}

func amdFamily(c CC) string {
	switch {
	case c.IsGCN():
		return "GCN"
	case c.IsCDNA1():
		return "CDNA1"
	case c.IsCDNA2():
		return "CDNA2"
	case c.IsCDNA3():
		return "CDNA3"
	case c.IsCDNA4():
		return "CDNA4"
	case c.IsRDNA1():
		return "RDNA1"
	case c.IsRDNA2():
		return "RDNA2"
	case c.IsRDNA3_0():
		return "RDNA3"
	case c.IsRDNA3_5():
		return "RDNA3_5"
	case c.IsRDNA4():
		return "RDNA4"
	}
	return "unknown"
}

// WaveSize is the physical wavefront (warp) width: 64 on AMD parts below
// RDNA1 (GCN and CDNA), 32 on RDNA, NVIDIA and Moore Threads. At run time
// prefer the warp size the device reports.
func (c CC) WaveSize() int {
	if c.IsAMD() && c < RDNA1 {
		return 64
	}
	return 32
}

// Name is the canonical architecture name: "sm_90" for NVIDIA, "gfx90a" or
// "gfx1030" for AMD, "mp_22" for Moore Threads. NVIDIA values that are not a
// multiple of 10 lose their last digit.
func (c CC) Name() string {
	switch c.Vendor() {
	case VendorAMD:
		v := int(c - OffsetAMD)
		return fmt.Sprintf("gfx%x%x%x", v>>8, (v>>4)&0xf, v&0xf)
	case VendorMThreads:
		v := int(c - OffsetMThreads)
		return fmt.Sprintf("mp_%d%d", v>>8, (v>>4)&0xf)
	}
	return fmt.Sprintf("sm_%d%d", int(c)/100, (int(c)/10)%10)
}

// String prints NVIDIA values in decimal ("900") and AMD and Moore Threads
// values in hexadecimal ("0x100090a"), as ggml's logs do.
func (c CC) String() string {
	if c.IsNVIDIA() {
		return fmt.Sprintf("%d", int(c))
	}
	return fmt.Sprintf("%#x", int(c))
}
