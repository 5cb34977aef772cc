package replicaset

import "errors"

var (
	errBoom     = errors.New("boom")
	errExceeded = errors.New(`exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2`)
)
