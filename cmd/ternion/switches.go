package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/ternion/ternion/internal/quote"
	"github.com/ternion/ternion/switches"
)

// writeSwitches prints the environment part of ternion devices. With all,
// every switch is listed — name and value (or "(unset)"), the layers that
// read it, its description — and then every other setting; otherwise only
// the settings in effect. A malformed value or a TERNION_ variable that is no
// switch says so on its line; reportSwitches explains it on standard error.
func writeSwitches(w io.Writer, settings []switches.Setting, all bool) {
	if all {
		fmt.Fprintln(w, "environment switches:")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, s := range settings {
			readBy, what := "-", s.Hint()
			if s.Switch != nil {
				readBy, what = s.Switch.ReadBy.String(), s.Switch.Describe()
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", settingText(s), readBy, what)
		}
		tw.Flush()
		return
	}
	fmt.Fprintln(w, "environment switches in effect:")
	inEffect := switches.InEffect(settings)
	for _, s := range inEffect {
		if s.Switch == nil {
			fmt.Fprintf(w, "  %s  (%s)\n", settingText(s), s.Hint())
			continue
		}
		fmt.Fprintf(w, "  %s\n", settingText(s))
	}
	if len(inEffect) == 0 {
		fmt.Fprintln(w, "  (none; ternion devices --features lists every switch)")
	}
}

// settingText is NAME=value (the value cut to quote.Max bytes), NAME (unset),
// or NAME=value (malformed).
func settingText(s switches.Setting) string {
	switch {
	case !s.Set:
		return s.Name + " (unset)"
	case s.Err != nil:
		return s.Name + "=" + quote.Text(s.Value) + " (malformed)"
	}
	return s.Name + "=" + quote.Text(s.Value)
}

// reportSwitches writes one line to w for every malformed switch
// (switches.Check), then one for every TERNION_ variable that is no switch,
// and reports whether any switch was malformed.
func reportSwitches(w io.Writer, settings []switches.Setting) (malformed bool) {
	errs := switches.Check(settings)
	for _, err := range errs {
		fmt.Fprintf(w, "ternion devices: %v\n", err)
	}
	for _, s := range settings {
		if s.Set && s.Switch == nil {
			fmt.Fprintf(w, "ternion devices: %s: %s (ternion devices --features lists every switch)\n", quote.Text(s.Name), s.Hint())
		}
	}
	return len(errs) > 0
}
