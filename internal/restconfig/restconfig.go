package restconfig

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
)

// PreferProtobuf returns a copy of c whose typed clients send protobuf
// bodies and accept protobuf first, JSON for what has no protobuf form.
func PreferProtobuf(c *rest.Config) *rest.Config {
	c = rest.CopyConfig(c)
	c.ContentType = runtime.ContentTypeProtobuf
	c.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	return c
}
