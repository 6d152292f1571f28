package switches

import (
	"slices"
	"strconv"
	"strings"
)

// Setting is one environment variable as a listing shows it.
type Setting struct {
	Name   string  // the variable, e.g. "TERNION_NO_VMM" or "HSA_OVERRIDE_GFX_VERSION_1"
	Value  string  // its value as set; "" when unset
	Set    bool    // whether it is set at all
	Switch *Switch // the switch it sets; nil for a TERNION_ variable that is no switch
	Err    error   // why the value is malformed (an *Error); nil when it is not
}

// Hint says what to do about a setting that is no switch ("" for a switch):
// not a ternion switch, and the switch mirroring ggml's variable of the same
// suffix when there is one (TERNION_FORCE_CUBLAS → TERNION_FORCE_BLAS).
func (s Setting) Hint() string {
	if s.Switch != nil {
		return ""
	}
	hint := "not a ternion switch"
	suffix := strings.TrimPrefix(s.Name, Prefix)
	for _, sw := range all {
		if strings.HasPrefix(sw.Name, Prefix) && (sw.GGML == "GGML_CUDA_"+suffix || sw.GGML == "GGML_"+suffix) {
			return hint + "; " + sw.Name + " is ggml's " + sw.GGML
		}
	}
	return hint
}

// Settings returns every switch in list order, set or not, with its value
// checked; then, sorted by name, the per-device variants that environ sets
// (HSA_OVERRIDE_GFX_VERSION_1) and every TERNION_ variable in environ that
// no switch has, so that nothing which may change behaviour goes unlisted.
// environ has os.Environ's form, "NAME=value".
func Settings(l Lookup, environ []string) []Setting {
	l = orEnv(l)
	var out []Setting
	for _, s := range all {
		v, ok := l(s.Name)
		out = append(out, setting(s, s.Name, v, ok))
	}
	var extra []Setting
	for _, kv := range environ {
		name, v, _ := strings.Cut(kv, "=")
		switch s := Find(name); {
		case s != nil && s.Name != name:
			extra = append(extra, setting(s, name, v, true))
		case s == nil && strings.HasPrefix(name, Prefix):
			extra = append(extra, Setting{Name: name, Value: v, Set: true})
		}
	}
	slices.SortFunc(extra, func(a, b Setting) int { return strings.Compare(a.Name, b.Name) })
	return slices.CompactFunc(append(out, extra...), func(a, b Setting) bool { return a.Name == b.Name })
}

// InEffect returns, in their order, the settings (from Settings) that are
// set; settings is left as it is.
func InEffect(settings []Setting) []Setting {
	return slices.DeleteFunc(slices.Clone(settings), func(s Setting) bool { return !s.Set })
}

// Check returns, in their order, the *Error of every setting (from
// Settings: every switch, per-device variants included) that is set to a
// malformed value; nil when there is none.
func Check(settings []Setting) []error {
	var errs []error
	for _, s := range settings {
		if s.Err != nil {
			errs = append(errs, s.Err)
		}
	}
	return errs
}

// setting checks value v of variable name, which sets switch s.
func setting(s *Switch, name, v string, set bool) Setting {
	st := Setting{Name: name, Value: v, Set: set, Switch: s}
	if set && strings.TrimSpace(v) != "" && s.check != nil {
		if err := s.check(v); err != nil {
			st.Err = &Error{Name: name, Value: v, Reason: err.Error()}
		}
	}
	return st
}

// deviceOf reads name as switch s's variant for one device, s.Name + "_<n>",
// and returns n.
func deviceOf(s *Switch, name string) (int, bool) {
	if !s.PerDevice {
		return 0, false
	}
	digits, ok := strings.CutPrefix(name, s.Name+"_")
	if !ok || digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	return n, err == nil
}
