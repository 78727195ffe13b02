package translate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
)

// This file holds the rules that map the tool-result content parts of
// @ag-ui/core 1.0 (see package agui) to AAP content blocks and back.

// A content part as @ag-ui/core 1.0 defines it, the fields read here.
type contentPart struct {
	Type   string `json:"type"`
	Text   string `json:"text"`
	Source *struct {
		Type     string `json:"type"`
		Value    string `json:"value"`
		MimeType string `json:"mimeType"`
	} `json:"source"`
}

// partToBlock maps one tool-result content part to the AAP block that
// holds it: a text part to a text block, an image whose source is an
// https:// URL, a data: URI or inline data to an image block. ok is false
// for every other part (audio, video, documents, images named by a
// provider's file handle or by an http:// URL, parts with fields AAP
// cannot keep such as metadata or an id, anything malformed).
func partToBlock(raw json.RawMessage) (aap.ContentBlock, bool) {
	var keys map[string]json.RawMessage
	if json.Unmarshal(raw, &keys) != nil {
		return nil, false
	}
	var p contentPart
	if json.Unmarshal(raw, &p) != nil {
		return nil, false
	}
	switch p.Type {
	case "text":
		if len(keys) != 2 || keys["text"] == nil {
			return nil, false
		}
		return &aap.TextBlock{Text: p.Text}, true
	case "image":
		if len(keys) != 2 || p.Source == nil {
			return nil, false
		}
		b, err := imageFromSource(p.Source.Type, p.Source.Value, p.Source.MimeType)
		if err != nil {
			return nil, false
		}
		// Only a part that comes back the same way is taken: a URL with a
		// mimeType, say, would lose it.
		back, err := json.Marshal(blockToPart(b))
		if err != nil || !jsonEqual(back, raw) {
			return nil, false
		}
		return b, true
	}
	return nil, false
}

// toolPartsToAAP maps the content parts of an AG-UI tool result to AAP
// tool-result content. A part AAP can hold becomes its block (see
// partToBlock); any other part becomes a text block holding the part's
// JSON, compacted, which ToolContentParts turns back into the part: nothing
// is lost and the AAP client sees what the part was.
func toolPartsToAAP(parts []json.RawMessage) aap.Content {
	blocks := make([]aap.ContentBlock, 0, len(parts))
	for _, raw := range parts {
		if b, ok := partToBlock(raw); ok {
			blocks = append(blocks, b)
			continue
		}
		var c bytes.Buffer
		if json.Compact(&c, raw) != nil {
			c.Reset()
			c.Write(raw)
		}
		blocks = append(blocks, &aap.TextBlock{Text: c.String()})
	}
	if len(blocks) == 0 {
		return aap.TextContent("")
	}
	return aap.BlockContent(blocks...)
}

// ToolContentParts is the AG-UI content-part form of AAP tool-result
// content: a text block is a text part, unless its text is the JSON of a
// part AAP cannot hold (kept as text when the part came in), which it is
// again; an image block is an image part. ok is false when the content
// needs no parts (a string, or text blocks only, which AG-UI carries as a
// string).
func ToolContentParts(c aap.Content) (parts []json.RawMessage, ok bool) {
	if !c.IsBlocks() {
		return nil, false
	}
	for _, b := range c.Blocks {
		if b.BlockType() == aap.BlockImage {
			ok = true
		}
		if tb, isText := b.(*aap.TextBlock); isText && isForeignPart(tb.Text) {
			ok = true
		}
	}
	if !ok {
		return nil, false
	}
	for _, b := range c.Blocks {
		if tb, isText := b.(*aap.TextBlock); isText && isForeignPart(tb.Text) {
			parts = append(parts, json.RawMessage(tb.Text))
			continue
		}
		p := blockToPart(b)
		if p == nil {
			continue
		}
		raw, err := json.Marshal(p)
		if err != nil {
			continue
		}
		parts = append(parts, raw)
	}
	return parts, true
}

// isForeignPart reports whether s is the JSON of a content part that
// toolPartsToAAP kept as text: an object with a "type" of a part kind.
func isForeignPart(s string) bool {
	if len(s) < 2 || s[0] != '{' || !strings.Contains(s, `"type"`) {
		return false
	}
	var p contentPart
	if json.Unmarshal([]byte(s), &p) != nil {
		return false
	}
	switch p.Type {
	case "audio", "video", "document", "image":
		return p.Source != nil
	case "text":
		return true
	}
	return false
}

// blockToPart is the AG-UI part of one AAP block of a tool result.
func blockToPart(b aap.ContentBlock) any {
	switch b := b.(type) {
	case *aap.TextBlock:
		return struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}{"text", b.Text}
	case *aap.ImageBlock:
		src, err := imageSource(b.URL)
		if err != nil {
			return nil
		}
		return struct {
			Type   string `json:"type"`
			Source any    `json:"source"`
		}{"image", src}
	}
	return nil
}

// jsonEqual reports whether two JSON texts hold the same value.
func jsonEqual(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return bytes.Equal(ja, jb)
}

// toolContentToAAP reads the content of an AG-UI tool message: a string,
// or (1.0) an array of content parts (toolPartsToAAP); errText is the
// message's error, which AAP holds as a first text block.
func toolContentToAAP(c any, errText string) (aap.Content, error) {
	if raw, ok := c.(json.RawMessage); ok {
		// The client's bytes, kept part by part.
		var parts []json.RawMessage
		if json.Unmarshal(raw, &parts) == nil {
			return withError(toolPartsToAAP(parts), errText), nil
		}
	}
	c, err := agui.DecodeContent(c)
	if err != nil {
		return aap.Content{}, err
	}
	if ic, ok := c.([]types.InputContent); ok {
		raw, err := json.Marshal(ic)
		if err == nil {
			err = json.Unmarshal(raw, &c)
		}
		if err != nil {
			return aap.Content{}, err
		}
	}
	arr, isArray := c.([]any)
	if !isArray {
		s, err := stringContent(c)
		if err != nil {
			return aap.Content{}, fmt.Errorf("content must be a string or an array of content parts, got %s", valueKind(c))
		}
		return aap.TextContent(toolText(s, errText)), nil
	}
	parts := make([]json.RawMessage, 0, len(arr))
	for _, p := range arr {
		raw, err := json.Marshal(p)
		if err != nil {
			return aap.Content{}, err
		}
		parts = append(parts, raw)
	}
	return withError(toolPartsToAAP(parts), errText), nil
}

// withError puts an AG-UI tool error before the content, as a first text
// block (AAP has no error field).
func withError(content aap.Content, errText string) aap.Content {
	if errText == "" {
		return content
	}
	return aap.BlockContent(append([]aap.ContentBlock{&aap.TextBlock{Text: "Error: " + errText}}, content.Blocks...)...)
}
