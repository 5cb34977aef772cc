// Package core serves the core/v1 resources that have grown out of the
// legacy table of server/registry (the rest of core/v1 is still there):
// PodTemplates and ReplicationControllers, as kube-apiserver does in
// pkg/registry/core/podtemplate and pkg/registry/core/replicationcontroller.
//
// Both get upstream's v1 defaults for their pod template (the pod spec
// defaults orch gives every workload's template) and upstream's validation
// (ValidatePodTemplate, ValidateReplicationController with the template
// checked by orch's pod validation), and kubectl's columns.
// ReplicationControllers also default selector and labels to the
// template's labels and replicas to 1, bump metadata.generation on spec
// changes, serve status (spec kept) and scale (autoscaling/v1) and belong
// to the "all" category; a v1 delete without a propagation policy orphans
// their pods, as upstream. Their controller is server/controllers/replication.
package core
