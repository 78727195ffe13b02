// Command agentcheck checks an agent before it is put behind a bridge: an
// AAP server (what agui2aap fronts) or an AG-UI agent (what aap2agui
// fronts). It holds scripted conversations with the agent and checks each
// answer against the protocol's documents and against what the bridge
// needs, printing one line per check (pass, fail or skip, with the section
// it rests on) and, for each failure, what was sent, what came back and
// what was expected. It exits 1 when a check fails. An AAP server is
// checked as a whole (GET /meta, error statuses, paging) and then agent by
// agent, each agent /meta lists (or the one --agent names) under its name.
//
//	agentcheck aap http://127.0.0.1:8080 [--key K] [--key2 K2] [--agent NAME]
//	agentcheck agui http://127.0.0.1:8000/agent [--header 'Authorization: Bearer K']
//
// --prompts FILE (YAML or JSON) gives the messages that make the agent
// answer, think, call a client tool, ask permission and fail; the defaults
// suit the demo agents. --json prints the report as JSON.
package main
