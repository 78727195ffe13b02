package agentconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/aapagui/aapagui/aap"
)

// The values of a server tool's "permissions" key in an agent
// description (LoadAgentDescription).
const (
	// PermissionsAAP (the default): the agent runs the tool only as the
	// session enabled and trusted it, and asks (a tool_call interrupt)
	// before running it untrusted.
	PermissionsAAP = "aap"
	// PermissionsNone: the agent runs the tool on its own, whatever the
	// session says (aap2agui.Config.OwnTools).
	PermissionsNone = "none"
)

// AgentDescription is what --agent-config describes: the agent of GET
// /meta and the server tools it runs on its own.
type AgentDescription struct {
	Agent    aap.AgentInfo
	OwnTools []aap.ToolSpec
}

// LoadAgentDescription reads an agent description from JSON, strictly: the
// AgentInfo of GET /meta (name, title, version, description, options,
// server tools as "tools", capabilities), where each tool may say
// "permissions": "aap" (the default: the agent honours the session's
// enabling and trust) or "none" (the agent runs it on its own: such tools
// go to OwnTools, not to the agent's tools).
func LoadAgentDescription(data []byte) (AgentDescription, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return AgentDescription{}, err
	}
	var d AgentDescription
	if raw, ok := top["tools"]; ok && string(raw) != "null" {
		var tools []json.RawMessage
		if err := json.Unmarshal(raw, &tools); err != nil {
			return AgentDescription{}, fmt.Errorf("tools: %w", err)
		}
		kept := make([]json.RawMessage, 0, len(tools))
		for i, t := range tools {
			var fields map[string]json.RawMessage
			if err := json.Unmarshal(t, &fields); err != nil || fields == nil {
				kept = append(kept, t) // AgentInfo names the problem
				continue
			}
			perm := PermissionsAAP
			if p, ok := fields["permissions"]; ok {
				if err := json.Unmarshal(p, &perm); err != nil || (perm != PermissionsAAP && perm != PermissionsNone) {
					return AgentDescription{}, fmt.Errorf("tools[%d].permissions: want %q (the agent honours the session's enabling and trust) or %q (the agent runs the tool on its own), got %s",
						i, PermissionsAAP, PermissionsNone, p)
				}
				delete(fields, "permissions")
				var err error
				if t, err = json.Marshal(fields); err != nil {
					return AgentDescription{}, err
				}
			}
			// Checked here, where the index is the file's.
			if err := unknownKeys(reflect.TypeFor[aap.ToolSpec](), decodeAny(t), fmt.Sprintf("tools[%d]", i)); err != nil {
				return AgentDescription{}, err
			}
			var spec aap.ToolSpec
			if err := json.Unmarshal(t, &spec); err != nil {
				var de *aap.DecodeError
				if errors.As(err, &de) && de.Field != "" {
					return AgentDescription{}, fmt.Errorf("tools[%d].%s: %s", i, de.Field, de.Reason)
				}
				return AgentDescription{}, fmt.Errorf("tools[%d]: %w", i, err)
			}
			if perm == PermissionsAAP {
				kept = append(kept, t)
				continue
			}
			d.OwnTools = append(d.OwnTools, spec)
		}
		b, err := json.Marshal(kept)
		if err != nil {
			return AgentDescription{}, err
		}
		top["tools"] = b
		if data, err = json.Marshal(top); err != nil {
			return AgentDescription{}, err
		}
	}
	info, err := LoadAgentInfo(data)
	if err != nil {
		return AgentDescription{}, err
	}
	d.Agent = info
	return d, nil
}

func decodeAny(data []byte) any {
	var v any
	_ = json.Unmarshal(data, &v)
	return v
}

// LoadAgentInfo reads an agent description (the AgentInfo of GET /meta:
// name, title, version, description, options, server tools as "tools",
// capabilities) from JSON, strictly. See LoadAgentDescription for one whose
// tools say who decides whether they run.
func LoadAgentInfo(data []byte) (aap.AgentInfo, error) {
	var info aap.AgentInfo
	if err := json.Unmarshal(data, &info); err != nil {
		return aap.AgentInfo{}, err
	}
	// A misspelt key ("capabilites") is an error, not a silent default.
	// AgentInfo decodes itself (to name the failing tool), which
	// json.Decoder.DisallowUnknownFields does not reach, so the keys are
	// checked against the type's JSON names here.
	var raw any
	if err := json.Unmarshal(data, &raw); err != nil {
		return aap.AgentInfo{}, err
	}
	if err := unknownKeys(reflect.TypeFor[aap.AgentInfo](), raw, ""); err != nil {
		return aap.AgentInfo{}, err
	}
	return info, nil
}

// unknownKeys reports the first key of raw (decoded JSON) that t has no
// field for, with its path. Values held as raw JSON or maps are not
// checked: their shape is free.
func unknownKeys(t reflect.Type, raw any, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[json.RawMessage]() {
		return nil
	}
	switch v := raw.(type) {
	case []any:
		if t.Kind() != reflect.Slice {
			return nil
		}
		for i, e := range v {
			if err := unknownKeys(t.Elem(), e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case map[string]any:
		if t.Kind() != reflect.Struct {
			return nil
		}
		fields := map[string]reflect.Type{}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			fields[name] = f.Type
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := k
			if path != "" {
				p = path + "." + k
			}
			ft, ok := fields[k]
			if !ok {
				return fmt.Errorf("unknown key %q", p)
			}
			if err := unknownKeys(ft, v[k], p); err != nil {
				return err
			}
		}
	}
	return nil
}
