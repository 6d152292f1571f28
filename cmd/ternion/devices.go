package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/ternion/ternion/arch"
	"github.com/ternion/ternion/core/split"
	"github.com/ternion/ternion/core/tensor"
	"github.com/ternion/ternion/internal/quote"
	"github.com/ternion/ternion/kernels"
	"github.com/ternion/ternion/switches"
	"github.com/ternion/ternion/vendorapi"
)

// deviceRow is one device as ternion devices reports it; the JSON keys are the
// CLI's stable output.
type deviceRow struct {
	Index          int            `json:"index"`  // global, across vendors
	Vendor         string         `json:"vendor"` // host, cuda, hip, musa
	Device         int            `json:"device"` // index within the vendor
	Name           string         `json:"name"`
	Arch           string         `json:"arch"`      // vendor arch name, e.g. sm_90, gfx90a:sramecc+:xnack-
	CC             int            `json:"cc"`        // ggml encoding, 0 for the host device
	CCString       string         `json:"cc_string"` // "900", "0x100090a", "-" for the host device
	Family         string         `json:"family"`
	SMs            int            `json:"sms"`
	MemoryTotal    uint64         `json:"memory_total"` // bytes
	MemoryFree     uint64         `json:"memory_free"`  // bytes
	WarpSize       int            `json:"warp_size"`
	VMM            bool           `json:"vmm"`
	VMMGranularity uint64         `json:"vmm_granularity,omitempty"`
	Integrated     bool           `json:"integrated"`
	PCIBusID       string         `json:"pci_bus_id,omitempty"`
	Override       string         `json:"override,omitempty"` // e.g. HSA_OVERRIDE_GFX_VERSION=10.3.0
	TensorSplit    float64        `json:"tensor_split"`       // the row split in effect (TERNION_TENSOR_SPLIT, else by total memory): where this device's share starts
	Features       *arch.Features `json:"features"`           // null for the host device
	Notes          []string       `json:"notes,omitempty"`    // what a user must know to trust the row
}

// vendorReport is what opening one vendor gave.
type vendorReport struct {
	Vendor   string
	Opened   bool                // the driver opened and counted its devices
	Problems []string            // one line each: "cuda: driver not found (libcuda.so.1)", "cuda: 0 devices"
	Features []vendorapi.Feature // FeatureLister output, nil when the driver has none
	Split    []float64           // tensor split of the vendor's devices: where each device's share starts
	// SplitSet is the TERNION_TENSOR_SPLIT in effect ("" when unset: the
	// split by total memory), SplitShares its shares ("0:0.700 1:0.300")
	// and SplitRounding the row rounding of a split tensor.
	SplitSet      string
	SplitShares   string
	SplitRounding int64
}

// inventory is everything ternion devices prints, gathered once.
type inventory struct {
	Vendors []string // compiled in
	Devices []deviceRow
	Reports []vendorReport
}

// opened reports whether any vendor opened.
func (inv inventory) opened() bool {
	return slices.ContainsFunc(inv.Reports, func(r vendorReport) bool { return r.Opened })
}

// problems returns every vendor's problem lines in vendor order.
func (inv inventory) problems() []string {
	var out []string
	for _, r := range inv.Reports {
		out = append(out, r.Problems...)
	}
	return out
}

// collect turns the outcome of opening every vendor into rows and problem
// lines. It never drops a vendor or a device silently: a failure becomes a
// line. The tensor split is TERNION_TENSOR_SPLIT read through lookup when
// it is set, else the default by total memory.
func collect(vendors []string, probes []vendorapi.Probe, lookup switches.Lookup) inventory {
	inv := inventory{Vendors: vendors}
	props, propsSet, propsErr := switches.Get(lookup, switches.TensorSplit)
	for _, p := range probes {
		r := vendorReport{Vendor: p.Vendor}
		if p.Err != nil || p.Driver == nil {
			err := p.Err
			if err == nil {
				err = errors.New("opener returned no driver")
			}
			r.Problems = append(r.Problems, problemLine(p.Vendor, err))
			inv.Reports = append(inv.Reports, r)
			continue
		}
		if fl, ok := p.Driver.(vendorapi.FeatureLister); ok {
			r.Features = fl.Features()
		}
		n, err := p.Driver.DeviceCount()
		switch {
		case err != nil:
			r.Problems = append(r.Problems, problemLine(p.Vendor, err))
		case n == 0:
			r.Opened = true
			r.Problems = append(r.Problems, p.Vendor+": 0 devices")
		default:
			r.Opened = true
		}
		var starts []float64
		switch {
		case n == 0:
		case propsSet && propsErr == nil:
			raw, _ := lookup(switches.TensorSplit.Name)
			s, err := split.ForDriver(p.Driver, props)
			if err != nil {
				r.Problems = append(r.Problems, problemLine(p.Vendor, fmt.Errorf("tensor split %s=%s: %w", switches.TensorSplit.Name, raw, err)))
				break
			}
			starts = s.Starts()
			r.SplitSet, r.SplitShares, r.SplitRounding = raw, s.String(), s.Rounding(tensor.F32)
		case propsSet: // malformed: reported with the switches
		default:
			if starts, err = split.Default(p.Driver); err != nil {
				r.Problems = append(r.Problems, problemLine(p.Vendor, fmt.Errorf("tensor split: %w", err)))
			}
		}
		for dev := range n {
			row, err := deviceOf(p.Vendor, p.Driver, dev)
			if err != nil {
				r.Problems = append(r.Problems, problemLine(p.Vendor, fmt.Errorf("device %d: %w", dev, err)))
				continue
			}
			if dev < len(starts) {
				row.TensorSplit = starts[dev]
				r.Split = append(r.Split, starts[dev])
			}
			row.Index = len(inv.Devices)
			inv.Devices = append(inv.Devices, row)
		}
		inv.Reports = append(inv.Reports, r)
	}
	return inv
}

// deviceOf reads one device's properties and memory.
func deviceOf(vendor string, d vendorapi.Driver, dev int) (deviceRow, error) {
	p, err := d.Props(dev)
	if err != nil {
		return deviceRow{}, err
	}
	free, total, err := d.MemInfo(dev)
	if err != nil {
		return deviceRow{}, err
	}
	row := deviceRow{
		Vendor:         vendor,
		Device:         dev,
		Name:           p.Name,
		Arch:           p.ArchName,
		CC:             int(p.CC),
		SMs:            p.SMs,
		MemoryTotal:    total,
		MemoryFree:     free,
		WarpSize:       p.WarpSize,
		VMM:            p.VMM,
		VMMGranularity: p.VMMGranularity,
		Integrated:     p.Integrated,
		PCIBusID:       p.PCIBusID,
		Override:       p.ArchOverride,
	}
	if vendor == "host" || p.CC == 0 {
		row.CCString = "-"
		row.Family = "host"
		if vendor != "host" {
			row.Family = "unknown"
			row.Notes = append(row.Notes, "driver reported no compute capability")
		}
		return row, nil
	}
	row.CCString = p.CC.String()
	row.Family = p.CC.Family()
	f := arch.FeaturesOf(p.CC, p.CompiledArchs)
	row.Features = &f
	if p.ArchOverride != "" {
		row.Notes = append(row.Notes, "arch override in effect: "+p.ArchOverride)
	}
	if p.CC.IsNVIDIA() && len(p.CompiledArchs) > 0 {
		names := make([]string, len(p.CompiledArchs))
		for i, c := range p.CompiledArchs {
			names[i] = c.Name()
		}
		switch hc := arch.HighestCompiled(p.CC, p.CompiledArchs); {
		case hc == 0:
			row.Notes = append(row.Notes, fmt.Sprintf("no prebuilt kernels for %s (built for %s): kernels are compiled at run time",
				p.CC.Name(), strings.Join(names, ",")))
		case hc != p.CC:
			row.Notes = append(row.Notes, fmt.Sprintf("kernels built for %s run on this %s; features follow %s",
				hc.Name(), p.CC.Name(), hc.Name()))
		}
	}
	if p.CC.IsNVIDIA() {
		target := p.CC.Name() + "a" // sm_90a
		if fams := archSpecificFamilies(target); len(fams) > 0 {
			if slices.Contains(p.ArchSpecific, target) {
				row.Notes = append(row.Notes, fmt.Sprintf("%s kernels (%s) are compiled at run time by NVRTC", target, strings.Join(fams, ",")))
			} else {
				row.Notes = append(row.Notes, fmt.Sprintf("no %s kernels (%s): they need NVRTC 12 or later, which is missing or disabled here; their ops take other paths",
					target, strings.Join(fams, ",")))
			}
		}
	}
	return row, nil
}

// archSpecificFamilies names the kernel families of code for target only
// (kernels.Family.ArchSpecific).
func archSpecificFamilies(target string) []string {
	var out []string
	for _, f := range kernels.Families {
		if f.ArchSpecific == target {
			out = append(out, f.Name)
		}
	}
	return out
}

// problemLine formats why a vendor (or one of its devices) is unusable as one
// line that starts with the vendor's name, e.g.
// "cuda: driver not found (libcuda.so.1)".
func problemLine(vendor string, err error) string {
	if !errors.Is(err, vendorapi.ErrNoDriver) {
		return vendor + ": " + strings.TrimPrefix(err.Error(), vendor+": ")
	}
	notFound := vendorapi.ErrNoDriver.Error()
	detail := strings.TrimSuffix(strings.TrimPrefix(err.Error(), vendor+": "), ": "+notFound)
	if ve := (*vendorapi.Error)(nil); errors.As(err, &ve) && ve.Message != "" {
		detail = ve.Message
	}
	if detail == "" || detail == notFound {
		return vendor + ": " + notFound
	}
	return fmt.Sprintf("%s: %s (%s)", vendor, notFound, detail)
}

// devices runs ternion devices.
func (a *app) devices(args []string) int {
	fs := a.newFlagSet("devices", "[--json] [--features]")
	asJSON := fs.Bool("json", false, "print the devices as a JSON array (problems go to stderr)")
	features := fs.Bool("features", false, "list every environment switch with its value and meaning")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return flagStatus(err)
	}
	if len(pos) > 0 {
		fmt.Fprintf(a.stderr, "ternion devices: unexpected argument %s\n", quote.Q(pos[0]))
		fs.Usage()
		return exitUsage
	}
	inv := collect(a.vendors(), a.probe(), a.lookupEnv)
	settings := switches.Settings(a.lookupEnv, a.environ())
	if *asJSON {
		if err := writeDevicesJSON(a.stdout, inv); err != nil {
			fmt.Fprintf(a.stderr, "ternion devices: %v\n", err)
			return exitFail
		}
	} else {
		writeDevicesText(a.stdout, inv, settings, *features)
	}
	malformed := reportSwitches(a.stderr, settings)
	if *asJSON {
		for _, p := range inv.problems() {
			fmt.Fprintln(a.stderr, p)
		}
	}
	if !inv.opened() {
		fmt.Fprintf(a.stderr, "ternion devices: no vendor opened (compiled in: %s)\n", strings.Join(inv.Vendors, ", "))
		return exitFail
	}
	if malformed {
		return exitFail
	}
	return exitOK
}

// writeDevicesJSON prints the rows as an indented JSON array ([] when empty).
func writeDevicesJSON(w io.Writer, inv inventory) error {
	rows := inv.Devices
	if rows == nil {
		rows = []deviceRow{}
	}
	return writeJSON(w, rows)
}

// writeJSON prints v as indented JSON (two spaces), as every --json does.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeDevicesText prints the device table, then the build's vendors, its
// switches, the environment settings in effect and every vendor problem.
// With all, every environment switch is listed with its value and meaning,
// set or not (writeSwitches).
func writeDevicesText(w io.Writer, inv inventory, settings []switches.Setting, all bool) {
	if len(inv.Devices) == 0 {
		fmt.Fprintln(w, "no devices")
	} else {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "#\tVENDOR\tDEV\tNAME\tARCH\tCC\tFAMILY\tSMS\tMEMORY FREE/TOTAL\tWARP\tVMM\tINTEGRATED\tFEATURES")
		for _, d := range inv.Devices {
			feats := "-"
			if d.Features != nil {
				if on := featureNames(*d.Features); len(on) > 0 {
					feats = strings.Join(on, ",")
				}
			}
			fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%s\t%s\t%d\t%s / %s\t%d\t%s\t%s\t%s\n",
				d.Index, d.Vendor, d.Device, orDash(d.Name), orDash(d.Arch), d.CCString, d.Family, d.SMs,
				humanBytes(d.MemoryFree), humanBytes(d.MemoryTotal), d.WarpSize, yesNo(d.VMM), yesNo(d.Integrated), feats)
		}
		tw.Flush()
		for _, d := range inv.Devices {
			for _, n := range d.Notes {
				fmt.Fprintf(w, "note: device %d (%s %d): %s\n", d.Index, d.Vendor, d.Device, n)
			}
		}
	}
	for _, r := range inv.Reports {
		if r.SplitSet != "" {
			fmt.Fprintf(w, "tensor split in effect (%s, %s=%s): shares of a split tensor's rows %s, boundaries rounded down to %d rows\n",
				r.Vendor, switches.TensorSplit.Name, r.SplitSet, r.SplitShares, r.SplitRounding)
			continue
		}
		if len(r.Split) > 1 {
			parts := make([]string, len(r.Split))
			for i, f := range r.Split {
				parts[i] = fmt.Sprintf("%d:%.3f", i, f)
			}
			fmt.Fprintf(w, "default tensor split (%s, by total memory): %s\n", r.Vendor, strings.Join(parts, " "))
		}
	}
	fmt.Fprintf(w, "\nvendors compiled in: %s\n", strings.Join(inv.Vendors, ", "))

	fmt.Fprintln(w, "build switches:")
	listed := false
	for _, r := range inv.Reports {
		for _, f := range r.Features {
			fmt.Fprintf(w, "  %s: %s=%s\n", r.Vendor, f.Name, f.Value)
			listed = true
		}
	}
	if !listed {
		fmt.Fprintln(w, "  (none reported by the drivers)")
	}
	writeSwitches(w, settings, all)

	if probs := inv.problems(); len(probs) > 0 {
		fmt.Fprintln(w, "vendors not usable:")
		for _, p := range probs {
			fmt.Fprintln(w, "  "+p)
		}
	}
}

// featureNames returns the JSON names of the features that are on, in the
// order arch.Features declares them.
func featureNames(f arch.Features) []string {
	var on []string
	v := reflect.ValueOf(f)
	t := v.Type()
	for i := range t.NumField() {
		if v.Field(i).Kind() != reflect.Bool || !v.Field(i).Bool() {
			continue
		}
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" {
			name = strings.ToLower(t.Field(i).Name)
		}
		on = append(on, name)
	}
	return on
}

// humanBytes prints a byte count in binary units: "512 B", "1.5 KiB", "141.0 GiB".
func humanBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
