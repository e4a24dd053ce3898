// Package server is the server side of the daemon's protocol (package rpc,
// whose documentation specifies it): Serve answers requests with a
// rpc.Handler on the connections of a listener, Listen makes the daemon's
// socket under its single-instance lock, SameUser vets peers, Notify
// sends part of an answer ahead of its response, Reserve counts an answer
// being built in the reply budget, and TakeTurn makes a connection's
// answers of no set size one at a time. It uses package net; the client,
// in package rpc, does not, so a program that only queries the daemon
// stays small and statically linked.
package server
