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
	// ServingCSRPEM optionally asks for a kubelet-API serving certificate
	// too (CN system:node:<nodeName>, O system:nodes, DNS SAN <nodeName>,
	// IP SANs NodeIPs). Old clients omit it and get no serving certificate.
	ServingCSRPEM string `json:"servingCSRPEM,omitempty"`
	// NodeIPs are the addresses the node claims (e.g. its InternalIP), put
	// into the serving certificate; only allowed with ServingCSRPEM.
	NodeIPs []string `json:"nodeIPs,omitempty"`
}

// NodeCertificateResponse is the answer to a successful request.
type NodeCertificateResponse struct {
	CertificatePEM string `json:"certificatePEM"`
	CAPEM          string `json:"caPEM"`
	// ServingCertificatePEM is set when the request had a ServingCSRPEM.
	ServingCertificatePEM string `json:"servingCertificatePEM,omitempty"`
}
