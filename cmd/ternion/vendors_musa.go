//go:build musa

package main

import _ "github.com/ternion/ternion/musa"
