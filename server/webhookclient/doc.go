// Package webhookclient POSTs JSON reviews to webhooks the way
// kube-apiserver does, for admission webhooks and CRD conversion webhooks
// alike: by URL, or through a Service resolved to a ready endpoint (so a
// server started without an agent reaches them too), over TLS verified
// against the configuration's caBundle for <service>.<namespace>.svc.
package webhookclient
