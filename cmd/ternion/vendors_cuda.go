//go:build cuda

package main

import _ "github.com/ternion/ternion/cuda"
