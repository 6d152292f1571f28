//go:build hip

package main

import _ "github.com/ternion/ternion/hip"
