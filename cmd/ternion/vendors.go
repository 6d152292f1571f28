package main

// The host vendor is always compiled in; GPU vendors come with their build tag
// (vendors_cuda.go, ...).
import _ "github.com/ternion/ternion/host"
