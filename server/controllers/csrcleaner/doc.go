// Package csrcleaner is kube-controller-manager's CSR cleaner: it deletes
// CertificateSigningRequests once they are of no more use, so automatic
// requesters cannot pile them up — issued ones an hour after approval or
// when their certificate expires, denied and failed ones an hour after
// that condition, approved ones never issued after a day, and ones nobody
// handled a day after creation. Unlike upstream it does not list every
// hour: each request is queued again at its own deadline from the shared
// cache.
package csrcleaner
