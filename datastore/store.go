package datastore

import (
	"context"
	"errors"
)

// Sentinel errors returned by every Store implementation. Callers check them
// with errors.Is; implementations wrap them with context using %w.
var (
	// ErrKeyExists is returned by Create (and a Txn create op) when the key is present.
	ErrKeyExists = errors.New("datastore: key already exists")
	// ErrNotFound is returned by Get, Update and Delete when the key is absent.
	ErrNotFound = errors.New("datastore: key not found")
	// ErrConflict is returned when an expected mod revision does not match.
	ErrConflict = errors.New("datastore: revision conflict")
	// ErrCompacted is returned by Watch when fromRev is older than the event history.
	ErrCompacted = errors.New("datastore: revision compacted")
	// ErrNotLeader is returned by writes on a server that is not the Raft leader.
	ErrNotLeader = errors.New("datastore: not the leader")
	// ErrUnknownCommand is returned by the FSM for a command type it does not know.
	ErrUnknownCommand = errors.New("datastore: unknown command type")
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("datastore: closed")
	// ErrUnsupported is returned by a store that cannot express an operation
	// (etcd cannot delete and re-create one key in a single Txn); nothing
	// was written.
	ErrUnsupported = errors.New("datastore: operation not supported by this store")
)

// KV is one stored key with its revisions.
type KV struct {
	Key            string
	Value          []byte
	CreateRevision int64
	ModRevision    int64
}

// EventType tells what happened to a key.
type EventType uint8

const (
	// EventCreate is a put of a key that did not exist.
	EventCreate EventType = iota + 1
	// EventUpdate is a put of a key that existed.
	EventUpdate
	// EventDelete is the removal of a key.
	EventDelete
)

// Event is one change, delivered by Watch in revision order.
// For EventDelete, KV holds the last value of the key and KV.ModRevision is the
// revision of the delete. PrevKV is set for updates and deletes.
type Event struct {
	Type     EventType
	Revision int64
	KV       KV
	PrevKV   *KV
}

// OpType is the kind of one operation inside a Txn.
type OpType uint8

const (
	// OpCreate fails with ErrKeyExists when the key exists.
	OpCreate OpType = iota + 1
	// OpUpdate fails with ErrNotFound when absent, ErrConflict when ExpectedRev != 0 and differs.
	OpUpdate
	// OpDelete fails with ErrNotFound when absent, ErrConflict when ExpectedRev != 0 and differs.
	OpDelete
)

// Op is one operation of a multi-op transaction. All ops of a Txn apply
// atomically at one new revision, or none does.
type Op struct {
	Type        OpType
	Key         string
	Value       []byte
	ExpectedRev int64 // 0 = unconditional (update/delete only)
}

// ListResult is one page of a prefix range read at Revision.
type ListResult struct {
	KVs      []KV
	Revision int64 // the store revision the page was read at
	More     bool  // more keys follow; continue from the last key + "\x00"
}

// Store is the seam between the API server and the replicated datastore.
// Writes return only after they are committed and applied; the returned
// revision is the store revision the write produced. Reads are served from
// the local applied state.
type Store interface {
	Create(ctx context.Context, key string, value []byte) (rev int64, err error)
	Update(ctx context.Context, key string, value []byte, expectedRev int64) (rev int64, err error)
	Delete(ctx context.Context, key string, expectedRev int64) (rev int64, prev *KV, err error)
	Txn(ctx context.Context, ops []Op) (rev int64, err error)

	Get(ctx context.Context, key string) (*KV, error)
	// List returns keys with the given prefix, in key order, starting at
	// startKey (inclusive; "" = from the prefix), at most limit keys (0 = all).
	List(ctx context.Context, prefix, startKey string, limit int64) (ListResult, error)
	// ListAt is List as of the earlier revision rev (a continue page of a
	// paginated list sees the snapshot of its first page). It fails with
	// ErrCompacted when rev is older than the kept event history.
	ListAt(ctx context.Context, prefix, startKey string, limit, rev int64) (ListResult, error)
	// Count returns how many keys have the prefix.
	Count(ctx context.Context, prefix string) (int64, error)
	// Revision is the current applied store revision.
	Revision() int64
	// Sync waits until this server's local reads reflect every write
	// acknowledged (on any server) before Sync was called: a quorum read is
	// Sync followed by Get/List. Stores whose reads are always current
	// return nil at once.
	Sync(ctx context.Context) error

	// Watch streams events for keys with prefix whose revision is > fromRev
	// (fromRev 0 = from now). It fails with ErrCompacted when fromRev is older
	// than the kept history. The channel is closed when ctx ends, when the
	// store closes, or when the watcher falls too far behind (the caller then
	// re-lists or resumes from its last seen revision).
	Watch(ctx context.Context, prefix string, fromRev int64) (<-chan Event, error)

	Close() error
}
