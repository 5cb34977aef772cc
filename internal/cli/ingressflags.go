package cli

import ucli "github.com/urfave/cli/v2"

// ingressHTTPPortFlag and ingressHTTPSPortFlag are the ports of the built-in
// Ingress controller (agent/ingress), shared by `orch agent` and
// `orch server` (its own node).
func ingressHTTPPortFlag() ucli.Flag {
	return &ucli.IntFlag{Name: "ingress-http-port", Value: 80, EnvVars: envVars("ingress-http-port"),
		Usage: "port the built-in Ingress controller serves HTTP on, on every node address, while IngressClass orch exists (0: off)"}
}

func ingressHTTPSPortFlag() ucli.Flag {
	return &ucli.IntFlag{Name: "ingress-https-port", Value: 443, EnvVars: envVars("ingress-https-port"),
		Usage: "port the built-in Ingress controller serves HTTPS (TLS from the Ingresses' Secrets, HTTP/2) on (0: off)"}
}
