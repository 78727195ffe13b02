package agui

// AgentDescription is one entry of the agent list an AG-UI server gives for
// discovery (agui2aap's GET /agents): an agent, where it runs, and its
// capabilities.
type AgentDescription struct {
	Name         string            `json:"name"`
	URL          string            `json:"url"`
	Title        string            `json:"title,omitempty"`
	Description  string            `json:"description,omitempty"`
	Version      string            `json:"version"`
	Capabilities AgentCapabilities `json:"capabilities"`
}

// AgentCapabilities follows AG-UI's capability discovery shape.
type AgentCapabilities struct {
	Identity struct {
		Name        string `json:"name"`
		Type        string `json:"type"`
		Description string `json:"description,omitempty"`
		Version     string `json:"version,omitempty"`
	} `json:"identity"`
	Transport struct {
		Streaming bool `json:"streaming"`
	} `json:"transport"`
	Tools struct {
		Supported      bool  `json:"supported"`
		Items          []any `json:"items"`
		ClientProvided bool  `json:"clientProvided"`
	} `json:"tools"`
	Reasoning struct {
		Supported bool `json:"supported"`
		Streaming bool `json:"streaming"`
	} `json:"reasoning"`
	Multimodal struct {
		Input struct {
			Image bool `json:"image"`
		} `json:"input"`
	} `json:"multimodal"`
	HumanInTheLoop struct {
		Supported  bool `json:"supported"`
		Approvals  bool `json:"approvals"`
		Interrupts bool `json:"interrupts"`
	} `json:"humanInTheLoop"`
}
