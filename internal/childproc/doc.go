// Package childproc starts child processes that must die with their parent
// (Pdeathsig) without dying early.
//
// Linux sends the parent-death signal when the *thread* that forked the
// child exits, not the process. Go ends an OS thread when a goroutine that
// locked it (runtime.LockOSThread) returns without unlocking, which orch
// does on purpose after entering a new network namespace
// (agent/network). A child forked from such a thread earlier would be
// killed then. Start forks on a locked thread that lives until the child
// has been waited for, so the signal comes only when the parent process
// dies.
package childproc
