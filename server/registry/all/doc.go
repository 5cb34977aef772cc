// Package all assembles the API orch serves from its groups: the legacy
// groups still defined in server/registry and one package per newer API
// group (server/registry/<group>), each a registry.Group. Resources returns
// the resource table for the API server, NewScheme the scheme with every
// group's types. A new group is one more entry in Groups.
package all
