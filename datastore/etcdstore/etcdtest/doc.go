// Package etcdtest starts a real etcd on loopback for tests: random ports,
// its own data directory, TLS with client-certificate authentication, and
// removal of everything when the test ends. The etcd binary is Debian's
// etcd-server package; scripts/install-etcd.sh installs it when missing.
package etcdtest
