// Package switches owns every environment variable ternion reads: one list
// (All) with each switch's name, meaning, default, kind of value and parser,
// the ggml name it mirrors, the layers that read it and whether it has an
// effect yet. Readers go through the typed accessors (On, Int, Get) with a
// Lookup — os.LookupEnv in production, a map in tests — so a malformed value
// is an error that names the variable, never silently ignored, and the list
// that `ternion devices --features` prints and README.md's table cannot drift
// from what the code reads: tests check both, and a test fails when any other
// package spells out a TERNION_ name.
//
// The package imports only arch (arch lists and HSA override versions are
// arch's syntax) and internal/quote, so every layer may import it: core, the
// host and GPU vendors, the kernel generator and the conformance suite.
package switches
