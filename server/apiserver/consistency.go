package apiserver

import (
	"context"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// syncRead makes a read with resourceVersion rv as current as the client
// asked, as kube-apiserver over etcd does: "" (the default) is a quorum
// read that sees every write acknowledged before it, on any server; a
// revision newer than this server has applied waits until it has; "0" and
// older revisions are served from the local state at once.
func (s *Server) syncRead(ctx context.Context, rv string) error {
	if rv == "0" {
		return nil
	}
	if rv != "" {
		n, err := strconv.ParseInt(rv, 10, 64)
		if err != nil || n <= s.store.Revision() {
			return nil // a bad value is refused later, with its own message
		}
	}
	if err := s.store.Sync(ctx); err != nil {
		return apierrors.NewTimeoutError(fmt.Sprintf("the datastore could not confirm a current read: %v", err), 1)
	}
	return nil
}

// resync decides a read-modify-write that failed on what this server read
// locally: a NotFound or Conflict may only mean its state lags the leader,
// so once per request it syncs (a quorum read) and reports true to retry.
// The leader's compare-and-swap keeps every write correct either way; this
// only keeps a lagging server from answering 404 or 409 wrongly. When the
// sync fails (no leader reachable, e.g. during an election) the local
// answer is unconfirmed: *err becomes a timeout instead of the stale
// 404/409 (test/reliability found one: a 404 for an object created and
// acknowledged before the request, while the leader was being killed).
func (s *Server) resync(ctx context.Context, synced *bool, err *error) bool {
	if *synced || !(apierrors.IsNotFound(*err) || apierrors.IsConflict(*err)) {
		return false
	}
	*synced = true
	if serr := s.store.Sync(ctx); serr != nil {
		*err = apierrors.NewTimeoutError(fmt.Sprintf("the datastore could not confirm the current state: %v", serr), 1)
		return false
	}
	return true
}
