// Command indexctl answers the Glob, Grep and LS agent tools from the command
// line (SPEC §10). Run "indexctl help" for its usage.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
