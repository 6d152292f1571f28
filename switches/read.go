package switches

import "strings"

// Get reads switch s through l: the parsed value and set = true when the
// variable is set and not blank; the switch's default and set = false when
// it is unset or blank. A value the parser rejects is an *Error naming the
// variable (with the default as the value).
func Get[T any](l Lookup, s Of[T]) (v T, set bool, err error) {
	raw, ok := orEnv(l)(s.Name)
	if !ok || strings.TrimSpace(raw) == "" {
		return s.def, false, nil
	}
	v, err = s.parse(raw)
	if err != nil {
		return s.def, true, &Error{Name: s.Name, Value: raw, Reason: err.Error()}
	}
	return v, true, nil
}

// On reports whether the on/off switch s is on: set to anything but "",
// "0", "false", "no" or "off" (in any case). Every value is valid.
func On(l Lookup, s Of[bool]) bool {
	on, _, _ := Get(l, s)
	return on
}

// Int reads an integer switch: its value, or its default when unset or
// blank; a malformed or out-of-range value is an *Error naming the variable.
func Int(l Lookup, s Of[int]) (int, error) {
	n, _, err := Get(l, s)
	return n, err
}
