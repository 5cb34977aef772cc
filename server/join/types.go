package join

// Paths served by the handler.
const (
	CACertsPath         = "/cacerts"
	PathPrefix          = "/v1-orch/"
	NodeCertificatePath = PathPrefix + "node-certificate"
)

// Node identity: the user and group of certificates issued to nodes.
const (
	NodeUserPrefix = "system:node:"
	NodesGroup     = "system:nodes"
)

// NodeCertificateRequest is the body of POST /v1-orch/node-certificate.
type NodeCertificateRequest struct {
	NodeName string `json:"nodeName"`
	CSRPEM   string `json:"csrPEM"`
}

// NodeCertificateResponse is the answer to a successful request.
type NodeCertificateResponse struct {
	CertificatePEM string `json:"certificatePEM"`
	CAPEM          string `json:"caPEM"`
}
