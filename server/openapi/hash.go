package openapi

import (
	"crypto/sha512"
	"fmt"
)

// hashOf is kube-openapi's ETag of a document: SHA-512 in upper-case hex.
func hashOf(b []byte) string { return fmt.Sprintf("%X", sha512.Sum512(b)) }
