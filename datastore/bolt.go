package datastore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

var (
	bucketKV   = []byte("kv")
	bucketMeta = []byte("meta")
	metaRev    = []byte("revision")
	metaIndex  = []byte("applied-index")
)

// kvHeader is the size of the create and mod revisions before a stored value.
const kvHeader = 16

// openBolt opens (creating if needed) the FSM state file and its buckets.
func openBolt(path string) (*bolt.DB, error) {
	db, err := bolt.Open(path, 0o600, boltOptions())
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("open state %s: it is locked: is another orch server running on this data dir? %w", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("open state %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketKV, bucketMeta} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("init state %s: %w", path, err)
	}
	return db, nil
}

// boltOptions are shared by the state file and the raft log: a large
// initial mmap, the hashmap freelist (fast frees after log truncation) and no
// freelist sync (less written per commit; rebuilt on open).
func boltOptions() *bolt.Options {
	return &bolt.Options{
		Timeout:         5 * time.Second,
		InitialMmapSize: initialMmapSize(),
		FreelistType:    bolt.FreelistMapType,
		NoFreelistSync:  true,
	}
}

// initialMmapSize is large on 64-bit hosts so the file rarely needs a remap
// (a remap waits for open read transactions, e.g. a snapshot being sent).
func initialMmapSize() int {
	if strconv.IntSize == 64 {
		return 1 << 30
	}
	return 128 << 20
}

// boltErr turns bbolt errors into our sentinels.
func boltErr(err error) error {
	if errors.Is(err, bolterrors.ErrDatabaseNotOpen) || errors.Is(err, bolterrors.ErrTxClosed) {
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
	return err
}

// encodeKV stores create rev, mod rev and the value.
func encodeKV(kv *KV) []byte {
	buf := make([]byte, kvHeader, kvHeader+len(kv.Value))
	binary.BigEndian.PutUint64(buf[0:8], uint64(kv.CreateRevision))
	binary.BigEndian.PutUint64(buf[8:16], uint64(kv.ModRevision))
	return append(buf, kv.Value...)
}

// decodeKV copies a stored value out of bbolt memory.
func decodeKV(key, v []byte) (*KV, error) {
	if len(v) < kvHeader {
		return nil, fmt.Errorf("datastore: corrupt value for %q (%d bytes)", key, len(v))
	}
	return &KV{
		Key:            string(key),
		Value:          append([]byte{}, v[kvHeader:]...),
		CreateRevision: int64(binary.BigEndian.Uint64(v[0:8])),
		ModRevision:    int64(binary.BigEndian.Uint64(v[8:16])),
	}, nil
}

// readMeta returns the stored revision and last applied raft index.
func readMeta(tx *bolt.Tx) (rev int64, index uint64) {
	b := tx.Bucket(bucketMeta)
	if v := b.Get(metaRev); len(v) == 8 {
		rev = int64(binary.BigEndian.Uint64(v))
	}
	if v := b.Get(metaIndex); len(v) == 8 {
		index = binary.BigEndian.Uint64(v)
	}
	return rev, index
}

// writeMeta stores the revision and last applied raft index.
func writeMeta(tx *bolt.Tx, rev int64, index uint64) error {
	b := tx.Bucket(bucketMeta)
	if err := b.Put(metaRev, binary.BigEndian.AppendUint64(nil, uint64(rev))); err != nil {
		return err
	}
	return b.Put(metaIndex, binary.BigEndian.AppendUint64(nil, index))
}

// boltGet reads one key; (nil, nil) when absent.
func boltGet(b *bolt.Bucket, key string) (*KV, error) {
	v := b.Get([]byte(key))
	if v == nil {
		return nil, nil
	}
	return decodeKV([]byte(key), v)
}

// boltList reads up to limit keys with prefix from startKey.
func boltList(tx *bolt.Tx, prefix, startKey string, limit int64) (ListResult, error) {
	rev, _ := readMeta(tx)
	res := ListResult{Revision: rev, KVs: []KV{}}
	if limit <= 0 {
		limit = math.MaxInt64
	}
	start := prefix
	if startKey > start {
		start = startKey
	}
	c := tx.Bucket(bucketKV).Cursor()
	p := []byte(prefix)
	for k, v := c.Seek([]byte(start)); k != nil && hasPrefix(k, p); k, v = c.Next() {
		if int64(len(res.KVs)) == limit {
			res.More = true
			break
		}
		kv, err := decodeKV(k, v)
		if err != nil {
			return ListResult{}, err
		}
		res.KVs = append(res.KVs, *kv)
	}
	return res, nil
}

// boltCount counts the keys with prefix.
func boltCount(tx *bolt.Tx, prefix string) int64 {
	c := tx.Bucket(bucketKV).Cursor()
	p := []byte(prefix)
	var n int64
	for k, _ := c.Seek(p); k != nil && hasPrefix(k, p); k, _ = c.Next() {
		n++
	}
	return n
}

func hasPrefix(k, p []byte) bool {
	return len(k) >= len(p) && string(k[:len(p)]) == string(p)
}
