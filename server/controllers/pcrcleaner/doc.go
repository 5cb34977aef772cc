// Package pcrcleaner deletes PodCertificateRequests older than 15
// minutes, as kube-controller-manager's podcertificaterequestcleaner
// does: every request's flow (the agent asks, a signer answers, the agent
// reads the answer) is expected to be over by then, and the agent keeps
// the credentials it got. A leader-only loop sweeps every 5 minutes and
// deletes through the API with a UID precondition.
package pcrcleaner
