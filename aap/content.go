package aap

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aapagui/aapagui/internal/jsonenc"
)

// BlockType names a kind of content block.
type BlockType string

// The four content-block types of AAP v3.
const (
	BlockText     BlockType = "text"
	BlockThinking BlockType = "thinking"
	BlockToolUse  BlockType = "tool_use"
	BlockImage    BlockType = "image"
)

// ContentBlock is one block of message content: *TextBlock, *ThinkingBlock,
// *ToolUseBlock or *ImageBlock. The set is closed.
type ContentBlock interface {
	BlockType() BlockType
	isBlock()
}

// TextBlock is a block of plain text.
type TextBlock struct {
	Text string
}

// ThinkingBlock is a block of the agent's reasoning.
type ThinkingBlock struct {
	Thinking string
}

// ToolUseBlock is a tool call recorded in an assistant message.
type ToolUseBlock struct {
	ToolCallID string
	Name       string
	// Input is the JSON object of arguments, kept byte for byte.
	Input json.RawMessage
}

// ImageBlock is an image given by an https:// URL or a data: URI.
type ImageBlock struct {
	URL string
}

// BlockType returns BlockText.
func (*TextBlock) BlockType() BlockType { return BlockText }

// BlockType returns BlockThinking.
func (*ThinkingBlock) BlockType() BlockType { return BlockThinking }

// BlockType returns BlockToolUse.
func (*ToolUseBlock) BlockType() BlockType { return BlockToolUse }

// BlockType returns BlockImage.
func (*ImageBlock) BlockType() BlockType { return BlockImage }

func (*TextBlock) isBlock()     {}
func (*ThinkingBlock) isBlock() {}
func (*ToolUseBlock) isBlock()  {}
func (*ImageBlock) isBlock()    {}

// MarshalJSON encodes the block with its "type".
func (b *TextBlock) MarshalJSON() ([]byte, error) { return appendBlock(nil, b) }

// MarshalJSON encodes the block with its "type".
func (b *ThinkingBlock) MarshalJSON() ([]byte, error) { return appendBlock(nil, b) }

// MarshalJSON encodes the block with its "type"; Input is compacted, and an
// empty Input is written as {}.
func (b *ToolUseBlock) MarshalJSON() ([]byte, error) { return appendBlock(nil, b) }

// MarshalJSON encodes the block with its "type".
func (b *ImageBlock) MarshalJSON() ([]byte, error) { return appendBlock(nil, b) }

// appendBlock appends the JSON of a block. It is written by hand rather than
// with json.Marshal, whose HTML escaping would rewrite "<", ">" and "&" in
// tool input (and which encoding/json applies to a MarshalJSON result even
// when the caller's Encoder has SetEscapeHTML(false)).
func appendBlock(dst []byte, b ContentBlock) ([]byte, error) {
	switch b := b.(type) {
	case *TextBlock:
		dst = append(dst, `{"type":"text","text":`...)
		dst = jsonenc.AppendString(dst, b.Text)
	case *ThinkingBlock:
		dst = append(dst, `{"type":"thinking","thinking":`...)
		dst = jsonenc.AppendString(dst, b.Thinking)
	case *ToolUseBlock:
		dst = append(dst, `{"type":"tool_use","toolCallId":`...)
		dst = jsonenc.AppendString(dst, b.ToolCallID)
		dst = append(dst, `,"name":`...)
		dst = jsonenc.AppendString(dst, b.Name)
		dst = append(dst, `,"input":`...)
		var err error
		if dst, err = AppendInput(dst, b.Input); err != nil {
			return dst, err
		}
	case *ImageBlock:
		dst = append(dst, `{"type":"image","url":`...)
		dst = jsonenc.AppendString(dst, b.URL)
	default:
		return dst, fmt.Errorf("aap: cannot encode content block %T", b)
	}
	return append(dst, '}'), nil
}

// appendContent appends content as a string or an array of blocks.
func appendContent(dst []byte, c Content) ([]byte, error) {
	if c.Blocks == nil {
		return jsonenc.AppendString(dst, c.Text), nil
	}
	dst = append(dst, '[')
	for i, b := range c.Blocks {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = appendBlock(dst, b); err != nil {
			return dst, err
		}
	}
	return append(dst, ']'), nil
}

// Content is the content of a message: either a string or a list of blocks.
// It remembers which of the two it was, so it re-encodes the same way: when
// Blocks is non-nil the content is a list (possibly empty), otherwise it is
// the string Text.
type Content struct {
	Text   string
	Blocks []ContentBlock
}

// TextContent returns string content.
func TextContent(s string) Content { return Content{Text: s} }

// BlockContent returns list content holding the given blocks.
func BlockContent(blocks ...ContentBlock) Content {
	if blocks == nil {
		blocks = []ContentBlock{}
	}
	return Content{Blocks: blocks}
}

// IsBlocks reports whether the content is a list of blocks.
func (c Content) IsBlocks() bool { return c.Blocks != nil }

// PlainText returns the text of the content: the string itself, or the text
// blocks joined in order with nothing between them (other blocks are
// skipped).
func (c Content) PlainText() string {
	if c.Blocks == nil {
		return c.Text
	}
	var n int
	var only *TextBlock
	for _, b := range c.Blocks {
		if t, ok := b.(*TextBlock); ok {
			n++
			only = t
		}
	}
	switch n {
	case 0:
		return ""
	case 1:
		return only.Text
	}
	var sb strings.Builder
	for _, b := range c.Blocks {
		if t, ok := b.(*TextBlock); ok {
			sb.WriteString(t.Text)
		}
	}
	return sb.String()
}

// MarshalJSON encodes the content as a string or an array of blocks.
func (c Content) MarshalJSON() ([]byte, error) { return appendContent(nil, c) }

// UnmarshalJSON decodes a string or an array of content blocks.
func (c *Content) UnmarshalJSON(data []byte) error {
	v, err := decodeContent(data)
	if err != nil {
		return err
	}
	*c = v
	return nil
}

func decodeContent(data []byte) (Content, error) {
	switch firstByte(data) {
	case '"':
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return Content{}, jsonErr("", err)
		}
		return Content{Text: s}, nil
	case '[':
		var raws []json.RawMessage
		if err := json.Unmarshal(data, &raws); err != nil {
			return Content{}, jsonErr("", err)
		}
		blocks := make([]ContentBlock, 0, len(raws))
		for i, raw := range raws {
			b, err := DecodeContentBlock(raw)
			if err != nil {
				return Content{}, within(index("", i), err)
			}
			blocks = append(blocks, b)
		}
		return Content{Blocks: blocks}, nil
	}
	return Content{}, &DecodeError{Reason: "must be a string or an array of content blocks"}
}

type wireBlock struct {
	Type       *string         `json:"type"`
	Text       *string         `json:"text"`
	Thinking   *string         `json:"thinking"`
	ToolCallID *string         `json:"toolCallId"`
	Name       *string         `json:"name"`
	Input      json.RawMessage `json:"input"`
	URL        *string         `json:"url"`
}

// DecodeContentBlock decodes one content block, checking its type and
// required fields.
func DecodeContentBlock(data []byte) (ContentBlock, error) {
	var w wireBlock
	if err := decodeObject(data, &w); err != nil {
		return nil, err
	}
	if w.Type == nil {
		return nil, fieldErr("type", "required")
	}
	switch BlockType(*w.Type) {
	case BlockText:
		if w.Text == nil {
			return nil, fieldErr("text", "required for a text block")
		}
		return &TextBlock{Text: *w.Text}, nil
	case BlockThinking:
		if w.Thinking == nil {
			return nil, fieldErr("thinking", "required for a thinking block")
		}
		return &ThinkingBlock{Thinking: *w.Thinking}, nil
	case BlockToolUse:
		if w.ToolCallID == nil || *w.ToolCallID == "" {
			return nil, fieldErr("toolCallId", "required for a tool_use block")
		}
		if w.Name == nil || *w.Name == "" {
			return nil, fieldErr("name", "required for a tool_use block")
		}
		in, err := decodeInput(w.Input)
		if err != nil {
			return nil, within("input", err)
		}
		return &ToolUseBlock{ToolCallID: *w.ToolCallID, Name: *w.Name, Input: in}, nil
	case BlockImage:
		if w.URL == nil {
			return nil, fieldErr("url", "required for an image block")
		}
		if err := checkImageURL(*w.URL); err != nil {
			return nil, within("url", err)
		}
		return &ImageBlock{URL: *w.URL}, nil
	}
	return nil, fieldErr("type", "unknown content block type %q", *w.Type)
}

func checkImageURL(u string) error {
	if strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "data:") {
		return nil
	}
	return &DecodeError{Reason: "must be an https:// URL or a data: URI"}
}

// decodeInput checks that raw (already a private copy made by
// json.Unmarshal) is a JSON object.
func decodeInput(raw json.RawMessage) (json.RawMessage, error) {
	if raw == nil {
		return nil, &DecodeError{Reason: "required"}
	}
	if firstByte(raw) != '{' {
		return nil, &DecodeError{Reason: "must be a JSON object"}
	}
	return raw, nil
}

// decodeObject unmarshals data into the wire struct v, insisting on a JSON
// object (json.Unmarshal would silently accept null).
func decodeObject(data []byte, v any) error {
	if firstByte(data) != '{' {
		return &DecodeError{Reason: "must be a JSON object"}
	}
	if err := json.Unmarshal(data, v); err != nil {
		return jsonErr("", err)
	}
	return nil
}

func firstByte(data []byte) byte {
	for _, c := range data {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c
	}
	return 0
}
