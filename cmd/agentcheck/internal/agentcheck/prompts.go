package agentcheck

import (
	"encoding/json"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

// Prompts are the user messages that make an agent do what a check needs.
// An unknown agent needs its own (a file, see LoadPrompts); the defaults
// work against the demo agents.
type Prompts struct {
	// Text gets a plain text answer.
	Text string `json:"text"`
	// Think gets reasoning before the answer; empty skips the checks that
	// need it.
	Think string `json:"think"`
	// ClientTool makes the agent call the client tool described by Tool.
	ClientTool string `json:"clientTool"`
	// Tool is the client tool offered with ClientTool.
	Tool ToolPrompt `json:"tool"`
	// Permission makes the agent call a server tool that needs the user's
	// permission (AAP: the tool named ServerTool, enabled untrusted; AG-UI:
	// an interrupt); empty skips those checks.
	Permission string `json:"permission"`
	// ServerTool is the AAP server tool Permission uses, with each agent
	// that declares it in /meta; with an agent that declares others, or
	// when empty, the first tool the agent declares.
	ServerTool string `json:"serverTool"`
	// ForwardedProps are sent with the AG-UI Permission run (the demo
	// AG-UI agent reads its server tools there, as aap2agui sends them).
	ForwardedProps json.RawMessage `json:"forwardedProps"`
	// Fail makes the agent fail (a model error); empty skips those checks.
	Fail string `json:"fail"`
}

// ToolPrompt describes a client tool.
type ToolPrompt struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	// Result is what the check answers the call with.
	Result string `json:"result"`
}

// DefaultPrompts work against the demo agents.
func DefaultPrompts() Prompts {
	return Prompts{
		Text:       "hello there",
		Think:      "think about tea",
		ClientTool: "weather in Paris",
		Tool: ToolPrompt{
			Name:        "get_weather",
			Description: "Get the current weather for a place",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`),
			Result:      "Sunny, 21°C",
		},
		Permission:     "search cats",
		ServerTool:     "web_search",
		ForwardedProps: json.RawMessage(`{"aap":{"agent":{"tools":[{"name":"web_search"}]}}}`),
		Fail:           "please fail",
	}
}

// LoadPrompts reads prompts from a YAML or JSON file; what the file leaves
// out keeps its default. A key the file sets to "" skips the checks that
// need it.
func LoadPrompts(path string) (Prompts, error) {
	p := DefaultPrompts()
	data, err := os.ReadFile(path)
	if err != nil {
		return p, err
	}
	if err := yaml.UnmarshalStrict(data, &p); err != nil {
		return p, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}
