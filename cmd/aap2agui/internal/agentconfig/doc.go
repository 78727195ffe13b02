// Package agentconfig reads aap2agui's --agent-config, JSON (the program
// converts YAML first), strictly: a misspelt key is an error naming it,
// never a silent default.
//
// The file takes one of two forms. The description of one agent (the
// AgentInfo of GET /meta, each server tool saying who decides whether it
// runs) is read by LoadAgentDescription; an object with an "agents" list
// (IsAgentsConfig), every agent with its own upstream, by
// LoadAgentsConfig, into the aap2agui.AgentConfig values the bridge
// serves.
package agentconfig
