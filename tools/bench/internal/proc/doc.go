// Package proc starts the servers under test as child processes in their own
// process group (killed with the bench tool via Pdeathsig), stops them, and
// reads their resident set size from /proc.
package proc
