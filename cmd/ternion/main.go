// Command ternion reports what the ternion GPU backend sees: the vendors
// compiled into this build, their devices and switches (ternion devices), and
// how an architecture name decodes (ternion arch).
//
// GPU vendors are compiled in with build tags (go build -tags cuda); the pure-Go
// host device is always there.
package main

import "os"

func main() {
	os.Exit(newApp(os.Stdout, os.Stderr).run(os.Args[1:]))
}
