// Package capture is the GPU-graph capture policy: for each Compute of a
// graph, a pure decision — run it eagerly, capture it, replay the executable
// graph captured earlier, update that executable, or re-instantiate it after
// a failed update — with a one-line reason naming the rule that decided.
//
// The seed's rules come first (REFERENCE.md, "Graph-capture policy"): the
// TERNION_DISABLE_GRAPHS switch, the device arch gate, the node gates (a node
// reading a split buffer, MUL_MAT_ID with ne[2] ≠ 1, a batched ADD, a CPY that
// cannot use pointer indirection), node-property matching that tells a replay
// from an update (a CPY's destination left to the caller's CPY pointer
// array, Options.CopyIndirection, so a KV-cache write that moves every token
// replays), and the fall-back after consecutive updates. Beyond the
// seed, each behind its own switch: a warm-up before the first capture,
// several executable graphs per backend keyed by the graph's shape, idle
// eviction, and a fall-back that ends after a number of eager calls instead
// of disabling graphs for good. SeedOptions reproduces the seed;
// DefaultOptions is the policy beyond it.
//
// Cache holds one backend's history. The package runs, captures and
// destroys nothing: the caller (core/backend's Compute) asks Decide, does
// what the verdict says, reports the outcome (Captured, CaptureFailed,
// Updated, UpdateFailed) and destroys what Evict hands back. The executable's
// type is a type parameter, so the policy is tested without a device.
//
// Where SeedOptions still differs from the seed, on purpose:
//   - Props compare more (the node's type, every op's parameters, the
//     layouts of leaf sources, a CPY's source pointer) and less (every
//     pointer and parameter of RESHAPE, PERMUTE and TRANSPOSE, like VIEW:
//     they launch nothing); see Props.
//   - Consecutive captures and updates are counted per shape, and the call
//     after the MaxUpdates-th one falls back only if it needs yet another
//     update: when its properties match, it replays (the seed falls back
//     regardless).
//   - A graph of another node count or shape is another Key: with one graph
//     kept, it is captured anew and the old one evicted, where the seed
//     updates its single graph and counts an update. Captures that each
//     evict another graph are bounded by MaxUpdates instead (counted from
//     the first capture that evicts).
//   - The split-buffer gate asks Options.IsSplit about every node that
//     launches work (the seed looks at src0's buffer only).
//   - With copy indirection off (TERNION_GRAPH_NO_CPY_INDIRECTION), a CPY
//     is compared like any node and gates nothing (the seed always
//     indirects, and gates the CPYs it cannot).
//
// A Cache keeps the nodes of the last call of each shape, so that a graph
// computed again as the same node objects is matched by its pointers alone
// (a node is not modified once built); Drop, DropAll and Evict let them go.
package capture
