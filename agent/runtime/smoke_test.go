package runtime

import (
	"context"
	"testing"
)

func TestDaemonVersion(t *testing.T) {
	d := sharedDaemon(t)
	v, err := d.client.Version(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("containerd %s (%s), snapshotter %s", v.Version, v.Revision, PickSnapshotter(context.Background(), d.client))
}
