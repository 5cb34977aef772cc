// Package encryption encrypts resources at rest, the way kube-apiserver's
// --encryption-provider-config does and with its file and value formats:
//
//   - Config is upstream's EncryptionConfiguration
//     (apiserver.config.k8s.io/v1): resources (e.g. "secrets",
//     "widgets.example.com", "*.apps", "*.*") and an ordered list of
//     providers: aescbc, aesgcm (keys of 16, 24 or 32 bytes, base64) and
//     identity. secretbox and kms are refused with a clear error.
//   - A value written under a configured resource is encrypted with the first
//     key of the first provider and stored as
//     "k8s:enc:aescbc:v1:<key name>:" + IV + AES-CBC/PKCS#7 ciphertext, or
//     "k8s:enc:aesgcm:v1:<key name>:" + nonce + AES-GCM ciphertext with the
//     storage key as additional data (upstream's aes transformers). identity
//     first stores plaintext.
//   - Reads pick the provider and key by the value's prefix, among every
//     configured key; values without a "k8s:enc:" prefix are plaintext, so
//     turning encryption on for an existing cluster just works.
//
// Store wraps a datastore.Store so everything below it (the Raft log, the
// FSM's bbolt file, Raft snapshots, the watch history) only sees ciphertext.
// Manager owns the config file <data-dir>/server/cred/encryption-config.json
// (mode 0600): created with one random aescbc key on first start, reloaded
// into the running Store on rotate-keys, and used by Reencrypt to rewrite
// every stale value with compare-and-swap updates. Handler serves the
// `orch secrets-encrypt` commands to the system:masters admin over the API
// port (/v1-orch/secrets-encrypt/...).
package encryption
