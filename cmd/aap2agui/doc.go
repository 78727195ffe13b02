// Command aap2agui serves the AAP API (version 3, and versions 1 and 2 with
// --aap-version) in front of an AG-UI agent.
//
// Without --upstream it runs the built-in AG-UI demo agent, so that
//
//	go run ./cmd/aap2agui
//
// works on a fresh machine. Every flag has an environment variable
// AAP2AGUI_<FLAG>; run with -h for the list.
package main
