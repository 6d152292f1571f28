package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/ternion/ternion/arch"
)

// archResult is one input of ternion arch as JSON: the decoded architecture,
// or Error alone (with Input) when the input is malformed.
type archResult struct {
	Input    string         `json:"input"`
	Vendor   string         `json:"vendor,omitempty"`
	CC       int            `json:"cc,omitempty"`        // ggml encoding, after any override
	CCString string         `json:"cc_string,omitempty"` // "900", "0x100090a"
	Name     string         `json:"name,omitempty"`      // canonical arch name: sm_90, gfx90a, mp_22
	Family   string         `json:"family,omitempty"`
	Gfx      string         `json:"gfx,omitempty"` // AMD only
	WaveSize int            `json:"wave_size,omitempty"`
	Features *arch.Features `json:"features,omitempty"`
	Override *arch.Override `json:"override,omitempty"` // when an HSA override applied
	Error    string         `json:"error,omitempty"`
}

// decodeAll decodes every input; a malformed one gives a result with Error set.
func decodeAll(inputs []string, override string) []archResult {
	out := make([]archResult, len(inputs))
	for i, in := range inputs {
		d, err := arch.Decode(in, override)
		if err != nil {
			out[i] = archResult{Input: in, Error: err.Error()}
			continue
		}
		f := d.Features
		out[i] = archResult{
			Input:    in,
			Vendor:   d.Vendor.String(),
			CC:       int(d.CC),
			CCString: d.CC.String(),
			Name:     d.CC.Name(),
			Family:   d.Family,
			Gfx:      d.Gfx,
			WaveSize: d.WaveSize,
			Features: &f,
			Override: d.Override,
		}
	}
	return out
}

// arch runs ternion arch.
func (a *app) arch(args []string) int {
	fs := a.newFlagSet("arch", "NAME... [--json] [--override X.Y.Z]")
	asJSON := fs.Bool("json", false, "print one JSON object per input, as an array")
	override := fs.String("override", "", "apply HSA_OVERRIDE_GFX_VERSION=`X.Y.Z` to AMD inputs (the environment is not read)")
	names, err := parseInterleaved(fs, args)
	if err != nil {
		return flagStatus(err)
	}
	if len(names) == 0 {
		fmt.Fprintln(a.stderr, "ternion arch: no architecture given")
		fs.Usage()
		return exitUsage
	}
	if *override != "" {
		if _, err := arch.ParseHSAOverride(*override); err != nil {
			fmt.Fprintf(a.stderr, "ternion arch: --override: %v\n", err)
			return exitUsage
		}
	}
	results := decodeAll(names, *override)
	if *asJSON {
		if err := writeJSON(a.stdout, results); err != nil {
			fmt.Fprintf(a.stderr, "ternion arch: %v\n", err)
			return exitFail
		}
	} else {
		writeArchText(a.stdout, a.stderr, results)
	}
	for _, r := range results {
		if r.Error != "" {
			return exitFail
		}
	}
	return exitOK
}

// writeArchText prints one table row per decoded input and one stderr line
// per malformed one.
func writeArchText(w, errw io.Writer, results []archResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "INPUT\tVENDOR\tCC\tNAME\tFAMILY\tGFX\tWAVE\tFEATURES")
	for _, r := range results {
		if r.Error != "" {
			fmt.Fprintf(errw, "ternion: %s\n", r.Error)
			continue
		}
		feats := "-"
		if on := featureNames(*r.Features); len(on) > 0 {
			feats = strings.Join(on, ",")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n",
			r.Input, r.Vendor, r.CCString, r.Name, r.Family, orDash(r.Gfx), r.WaveSize, feats)
	}
	tw.Flush()
	for _, r := range results {
		if r.Override != nil {
			fmt.Fprintf(w, "note: %s: %s=%s applied (as %s)\n", r.Input, r.Override.Env, r.Override.Value, r.Override.CC.Name())
		}
	}
}
