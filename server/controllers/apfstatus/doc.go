// Package apfstatus keeps the Dangling condition of every FlowSchema, as
// kube-apiserver's API Priority and Fairness configuration controller does:
// False (reason Found) when the PriorityLevelConfiguration it names exists,
// True (reason NotFound) when it does not. The condition is written by
// server-side apply of the status with upstream's field manager, so other
// conditions are left alone. server/apf does not classify requests to a
// dangling FlowSchema.
package apfstatus
