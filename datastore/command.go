package datastore

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// cmdType is the first byte of every replicated command.
type cmdType uint8

const (
	cmdCreate cmdType = iota + 1 // key, value
	cmdUpdate                    // key, value, expected revision
	cmdDelete                    // key, expected revision
	cmdTxn                       // op count, then per op: type, key, value, expected revision
)

// errBadCommand is returned when a command payload cannot be decoded.
var errBadCommand = errors.New("datastore: malformed command")

// encodeCommand encodes ops as one typed command: single ops use their own
// compact type, several ops become a txn.
func encodeCommand(ops []Op) []byte {
	buf := make([]byte, 0, 32+commandSize(ops))
	if len(ops) == 1 {
		op := ops[0]
		switch op.Type {
		case OpCreate:
			buf = append(buf, byte(cmdCreate))
			return appendValue(appendBytes(buf, op.Key), op.Value)
		case OpUpdate:
			buf = append(buf, byte(cmdUpdate))
			return binary.AppendVarint(appendValue(appendBytes(buf, op.Key), op.Value), op.ExpectedRev)
		case OpDelete:
			buf = append(buf, byte(cmdDelete))
			return binary.AppendVarint(appendBytes(buf, op.Key), op.ExpectedRev)
		}
	}
	buf = append(buf, byte(cmdTxn))
	buf = binary.AppendUvarint(buf, uint64(len(ops)))
	for _, op := range ops {
		buf = append(buf, byte(op.Type))
		buf = appendValue(appendBytes(buf, op.Key), op.Value)
		buf = binary.AppendVarint(buf, op.ExpectedRev)
	}
	return buf
}

func commandSize(ops []Op) int {
	n := 0
	for _, op := range ops {
		n += len(op.Key) + len(op.Value) + 24
	}
	return n
}

func appendBytes[T string | []byte](buf []byte, s T) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

func appendValue(buf, v []byte) []byte { return appendBytes(buf, v) }

// decoder reads the fields of a command payload.
type decoder struct {
	buf []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.buf)
	if n <= 0 {
		d.err = errBadCommand
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.buf)
	if n <= 0 {
		d.err = errBadCommand
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.buf)) {
		d.err = errBadCommand
		return nil
	}
	b := d.buf[:n:n]
	d.buf = d.buf[n:]
	return b
}

func (d *decoder) byte() byte {
	if d.err == nil && len(d.buf) == 0 {
		d.err = errBadCommand
	}
	if d.err != nil {
		return 0
	}
	b := d.buf[0]
	d.buf = d.buf[1:]
	return b
}

// finish reports a decode error or trailing garbage.
func (d *decoder) finish(what string) error {
	if d.err == nil && len(d.buf) != 0 {
		d.err = errBadCommand
	}
	if d.err != nil {
		return fmt.Errorf("decode %s command: %w", what, d.err)
	}
	return nil
}

func decodeCreate(p []byte) (Op, error) {
	d := decoder{buf: p}
	op := Op{Type: OpCreate, Key: string(d.bytes()), Value: d.bytes()}
	return op, d.finish("create")
}

func decodeUpdate(p []byte) (Op, error) {
	d := decoder{buf: p}
	op := Op{Type: OpUpdate, Key: string(d.bytes()), Value: d.bytes(), ExpectedRev: d.varint()}
	return op, d.finish("update")
}

func decodeDelete(p []byte) (Op, error) {
	d := decoder{buf: p}
	op := Op{Type: OpDelete, Key: string(d.bytes()), ExpectedRev: d.varint()}
	return op, d.finish("delete")
}

func decodeTxn(p []byte) ([]Op, error) {
	d := decoder{buf: p}
	n := d.uvarint()
	if n > uint64(len(p)) { // every op takes at least one byte
		return nil, fmt.Errorf("decode txn command: %d ops: %w", n, errBadCommand)
	}
	ops := make([]Op, 0, n)
	for i := uint64(0); i < n && d.err == nil; i++ {
		t := OpType(d.byte())
		ops = append(ops, Op{Type: t, Key: string(d.bytes()), Value: d.bytes(), ExpectedRev: d.varint()})
	}
	if err := d.finish("txn"); err != nil {
		return nil, err
	}
	return ops, validateOps(ops)
}
