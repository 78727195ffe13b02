package translate

import (
	"encoding/json"
	"fmt"

	"github.com/aapagui/aapagui/aap"
)

// ForwardedPropsKey is the key of RunAgentInput.forwardedProps under which
// AAP agent configuration travels: aap2agui puts the session's server tools
// and options there for the AG-UI agent, and agui2aap reads per-run
// overrides from it.
//
//	"forwardedProps": {"aap": {"agent": {"tools": [{"name": "web_search", "trust": true}], "options": {"language": "French"}}}}
const ForwardedPropsKey = "aap"

// Forwarded is the value under ForwardedPropsKey.
type Forwarded struct {
	Agent *aap.AgentConfig `json:"agent,omitempty"`
}

// ForwardedFrom reads the value under ForwardedPropsKey from
// forwardedProps as decoded from JSON (a map), or from any value that
// marshals to a JSON object. Absent yields nil.
func ForwardedFrom(props any) (*Forwarded, error) {
	var raw json.RawMessage
	switch p := props.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		v, ok := p[ForwardedPropsKey]
		if !ok || v == nil {
			return nil, nil
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		raw = b
	default:
		b, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("forwardedProps must be an object")
		}
		if raw = m[ForwardedPropsKey]; raw == nil {
			return nil, nil
		}
	}
	var f Forwarded
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("forwardedProps.%s: %w", ForwardedPropsKey, err)
	}
	return &f, nil
}
