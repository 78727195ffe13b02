// Command agui2aap serves AG-UI (one HttpAgent-compatible endpoint per
// agent, POST /agents/:name) in front of an AAP server, so that CopilotKit
// and other AG-UI frontends can talk to AAP agents.
//
// Without --upstream it runs the built-in AAP demo agent, so that
//
//	go run ./cmd/agui2aap
//
// works on a fresh machine. Every flag has an environment variable
// AGUI2AAP_<FLAG>; run with -h for the list.
package main
