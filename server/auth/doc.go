// Package auth authenticates and authorizes API requests: verified client
// certificates (CN = user, O = groups) and static bearer tokens in front, a
// rule-based authorizer behind. There is no anonymous access: a request
// without credentials is not authenticated and gets 401.
package auth
