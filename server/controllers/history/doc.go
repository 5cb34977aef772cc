// Package history keeps the ControllerRevisions of the DaemonSet and
// StatefulSet controllers, as upstream's pkg/controller/history does: one
// revision per distinct pod template, named "<parent>-<hash>", labelled
// controller-revision-hash=<hash>, owned by its parent, whose Data is the
// strategic-merge patch {"spec":{"template":{...,"$patch":"replace"}}}
// that `kubectl rollout undo` applies back to the parent. Revision numbers
// grow by one per template change; a template that comes back (undo) has
// its old revision renumbered to the newest.
//
// Sync finds or creates the current revision; Truncate deletes the oldest
// unused revisions beyond revisionHistoryLimit. If the API server does not
// serve controllerrevisions, Sync still returns the hash (the revision is
// then kept in memory only), so the controllers work without history.
package history
