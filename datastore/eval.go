package datastore

// ValidateOps checks the shape of a Txn's ops (non-empty, keys set, known op
// types). Store implementations outside this package call it before they
// evaluate or send a transaction.
func ValidateOps(ops []Op) error { return validateOps(ops) }

// EvalOps evaluates ops in order against the state read through get (plus
// the changes of earlier ops of the same txn) as if committed at revision
// rev, and returns their events or the first failure (ErrKeyExists,
// ErrNotFound, ErrConflict) exactly as the Raft FSM would. get returns
// (nil, nil) for an absent key. Nothing is written.
func EvalOps(get func(key string) (*KV, error), ops []Op, rev int64) ([]Event, error) {
	_, events, err := evalOps(get, ops, rev)
	return events, err
}
