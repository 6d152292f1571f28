package arch_test

import (
	"fmt"

	"github.com/ternion/ternion/arch"
)

func ExampleParseGfx() {
	g, err := arch.ParseGfx("gfx90a:sramecc+:xnack-")
	if err != nil {
		panic(err)
	}
	fmt.Println(g.Name, g.CC, g.CC.Family(), g.CC.WaveSize(), g.Features)

	generic, _ := arch.ParseGfx("gfx10-3-generic")
	fmt.Println(generic.Name, generic.CC, generic.CC.Family(), generic.CC.WaveSize())
	// Output:
	// gfx90a 0x100090a CDNA2 64 [sramecc+ xnack-]
	// gfx10-3-generic 0x1001030 RDNA2 32
}

func ExampleDecode() {
	d, err := arch.Decode("gfx1031", "10.3.0")
	if err != nil {
		panic(err)
	}
	fmt.Println(d.Vendor, d.Gfx, d.Family, d.Override.Env)

	nv, _ := arch.Decode("sm_90", "")
	fmt.Println(nv.Vendor, nv.CC, nv.Family, nv.Features.TuringMMA)
	// Output:
	// amd gfx1030 RDNA2 HSA_OVERRIDE_GFX_VERSION
	// nvidia 900 Hopper true
}

func ExampleFeaturesOf() {
	// An H100 running kernels built for sm_75 only: the hardware has bf16
	// tensor cores, but ggml's Ampere MMA kernels were not compiled.
	hc := arch.HighestCompiled(arch.Hopper, []arch.CC{750})
	f := arch.FeaturesOf(arch.Hopper, []arch.CC{750})
	fmt.Println(hc, f.BF16MMAHardware, f.TuringMMA, f.AmpereMMA)
	// Output:
	// 750 true true false
}

func ExampleHSAOverrideFor() {
	env := map[string]string{
		"HSA_OVERRIDE_GFX_VERSION":   "10.3.0",
		"HSA_OVERRIDE_GFX_VERSION_1": "11.0.0",
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for dev := range 2 {
		o, ok, err := arch.HSAOverrideFor(lookup, dev)
		fmt.Println(dev, o.Env, o.CC.Name(), ok, err)
	}
	// Output:
	// 0 HSA_OVERRIDE_GFX_VERSION gfx1030 true <nil>
	// 1 HSA_OVERRIDE_GFX_VERSION_1 gfx1100 true <nil>
}
