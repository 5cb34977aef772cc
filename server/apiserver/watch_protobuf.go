package apiserver

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// protoFrames writes watch events as kube-apiserver does for
// application/vnd.kubernetes.protobuf;stream=watch: each a metav1.WatchEvent
// in raw protobuf behind a 4-byte big-endian length, its object in the
// enveloped protobuf form (the "k8s\x00" magic and runtime.Unknown).
type protoFrames struct {
	enc runtime.Encoder
	w   io.Writer
	buf bytes.Buffer
}

func (f *protoFrames) send(typ watch.EventType, obj interface{}) error {
	o, ok := obj.(runtime.Object)
	if !ok {
		return fmt.Errorf("encode watch event: %T is not an object", obj)
	}
	f.buf.Reset()
	if err := f.enc.Encode(o, &f.buf); err != nil {
		return fmt.Errorf("encode watch event: %w", err)
	}
	ev := metav1.WatchEvent{Type: string(typ), Object: runtime.RawExtension{Raw: f.buf.Bytes()}}
	data, err := ev.Marshal()
	if err != nil {
		return fmt.Errorf("encode watch event: %w", err)
	}
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(data)))
	if _, err := f.w.Write(n[:]); err != nil {
		return err
	}
	_, err = f.w.Write(data)
	return err
}
