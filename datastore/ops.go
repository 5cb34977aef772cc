package datastore

import (
	"errors"
	"fmt"
)

// errEmptyTxn is returned for a Txn without operations.
var errEmptyTxn = errors.New("datastore: txn has no operations")

// change is one key write computed by evalOps: kv nil means delete.
type change struct {
	key string
	kv  *KV
}

// kvGetter reads the committed value of one key; (nil, nil) when absent.
type kvGetter func(key string) (*KV, error)

// validateOps checks the shape of ops before they are evaluated or replicated.
func validateOps(ops []Op) error {
	if len(ops) == 0 {
		return errEmptyTxn
	}
	for i, op := range ops {
		if op.Key == "" {
			return fmt.Errorf("datastore: op %d: empty key", i)
		}
		if op.Type < OpCreate || op.Type > OpDelete {
			return fmt.Errorf("datastore: op %d on %q: invalid op type %d", i, op.Key, op.Type)
		}
	}
	return nil
}

// evalOps evaluates ops in order against the state read through get (plus
// the changes of earlier ops of the same txn) at the new revision rev. It
// returns the resulting changes and events, or the first failure; nothing is
// written by evalOps itself, so a failure leaves the state untouched.
func evalOps(get kvGetter, ops []Op, rev int64) ([]change, []Event, error) {
	overlay := make(map[string]*KV, len(ops))
	read := func(key string) (*KV, error) {
		if kv, ok := overlay[key]; ok {
			return kv, nil
		}
		return get(key)
	}
	changes := make([]change, 0, len(ops))
	events := make([]Event, 0, len(ops))
	for _, op := range ops {
		cur, err := read(op.Key)
		if err != nil {
			return nil, nil, err
		}
		ev, err := evalOp(op, cur, rev)
		if err != nil {
			return nil, nil, err
		}
		var next *KV
		if ev.Type != EventDelete {
			kv := ev.KV
			next = &kv
		}
		overlay[op.Key] = next
		changes = append(changes, change{key: op.Key, kv: next})
		events = append(events, ev)
	}
	return changes, events, nil
}

// evalOp computes the event of one op applied to the current value cur.
func evalOp(op Op, cur *KV, rev int64) (Event, error) {
	switch op.Type {
	case OpCreate:
		if cur != nil {
			return Event{}, fmt.Errorf("create %q: %w", op.Key, ErrKeyExists)
		}
		kv := KV{Key: op.Key, Value: op.Value, CreateRevision: rev, ModRevision: rev}
		return Event{Type: EventCreate, Revision: rev, KV: kv}, nil
	case OpUpdate:
		if err := checkExpected("update", op, cur); err != nil {
			return Event{}, err
		}
		kv := KV{Key: op.Key, Value: op.Value, CreateRevision: cur.CreateRevision, ModRevision: rev}
		prev := *cur
		return Event{Type: EventUpdate, Revision: rev, KV: kv, PrevKV: &prev}, nil
	case OpDelete:
		if err := checkExpected("delete", op, cur); err != nil {
			return Event{}, err
		}
		kv := *cur
		kv.ModRevision = rev
		prev := *cur
		return Event{Type: EventDelete, Revision: rev, KV: kv, PrevKV: &prev}, nil
	}
	return Event{}, fmt.Errorf("datastore: op on %q: invalid op type %d", op.Key, op.Type)
}

// checkExpected enforces presence and the expected mod revision of op.
func checkExpected(verb string, op Op, cur *KV) error {
	if cur == nil {
		return fmt.Errorf("%s %q: %w", verb, op.Key, ErrNotFound)
	}
	if op.ExpectedRev != 0 && op.ExpectedRev != cur.ModRevision {
		return fmt.Errorf("%s %q: expected revision %d, have %d: %w",
			verb, op.Key, op.ExpectedRev, cur.ModRevision, ErrConflict)
	}
	return nil
}

// cloneKV returns a deep copy of kv (nil stays nil).
func cloneKV(kv *KV) *KV {
	if kv == nil {
		return nil
	}
	c := *kv
	c.Value = append([]byte(nil), kv.Value...)
	return &c
}
