// Command indexctl answers the Glob, Grep and LS agent tools from the command
// line (SPEC §10). Run "indexctl help" for its usage.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// A write to a closed pipe (| head) returns EPIPE instead of killing
	// the process, so indexctl can end quietly with status 0.
	signal.Ignore(syscall.SIGPIPE)
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
