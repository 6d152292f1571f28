package capture

import "strconv"

// Decision is what Compute does with a graph this call.
type Decision int

// The decisions.
const (
	// Eager launches every node on the stream, no graph involved.
	Eager Decision = iota
	// Capture runs the graph under stream capture, instantiates the
	// captured graph, launches it and reports Captured (or CaptureFailed).
	Capture
	// Replay launches the executable graph of the verdict's Key (Cache.Exec)
	// as it is; the caller refreshes the CPY destination pointers first.
	Replay
	// Update captures the graph again, updates the key's executable graph
	// with it, launches it and reports Updated (or UpdateFailed).
	Update
	// Reinstantiate destroys an executable graph whose update failed and
	// instantiates the graph just captured instead (what UpdateFailed
	// returns; Decide never does).
	Reinstantiate
)

var decisionNames = [...]string{Eager: "eager", Capture: "capture", Replay: "replay", Update: "update",
	Reinstantiate: "reinstantiate"}

// String names the decision: "eager", "capture", "replay", "update",
// "reinstantiate".
func (d Decision) String() string {
	if d >= 0 && int(d) < len(decisionNames) {
		return decisionNames[d]
	}
	return "Decision(" + strconv.Itoa(int(d)) + ")"
}

// Verdict is a decision and the reason for it: a short sentence naming the
// rule that decided, such as "node 12 (ADD) has src1 ne[1]=7 > 1: batched,
// the seed does not capture it".
type Verdict struct {
	Decision Decision
	Reason   string
	// Key is the graph's shape, which the outcome methods take; zero when
	// the decision came before the graph was keyed (switches, arch, node
	// gates).
	Key Key
}

// String reads "replay (25 nodes #…): same properties as the captured graph".
func (v Verdict) String() string {
	s := v.Decision.String()
	if v.Key != (Key{}) {
		s += " (" + v.Key.String() + ")"
	}
	return s + ": " + v.Reason
}
