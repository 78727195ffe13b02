package translate

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/agui"
)

// MessageError reports a message that cannot be translated. Index is the
// message's position in the input, ID its AG-UI id when known.
type MessageError struct {
	Index  int
	ID     string
	Reason string
	Err    error
}

// Error describes the failure.
func (e *MessageError) Error() string {
	if e.ID != "" {
		return fmt.Sprintf("message %d (id %q): %s", e.Index, e.ID, e.Reason)
	}
	return fmt.Sprintf("message %d: %s", e.Index, e.Reason)
}

// Unwrap returns the underlying error.
func (e *MessageError) Unwrap() error { return e.Err }

// ErrUnsupportedContent is wrapped by errors for content that has no
// counterpart on the other side (AG-UI audio, video and documents; AAP
// thinking or tool_use blocks in a user message).
var ErrUnsupportedContent = errors.New("content has no counterpart in the other protocol")

// MessagesToAGUI translates AAP history messages to AG-UI messages. newID
// supplies one id per AAP message (nil: random ids); an assistant message's
// thinking blocks become reasoning messages placed before it, with ids
// derived by reasoningMessageID. A tool_permission message is an error: it
// belongs in RunAgentInput.resume (see ResumeFromPermission).
func MessagesToAGUI(msgs []aap.Message, newID func() string) ([]types.Message, error) {
	newID = orRandom(newID, "msg-")
	out := make([]types.Message, 0, len(msgs))
	for i, m := range msgs {
		var err error
		if out, err = AppendMessageToAGUI(out, m, newID()); err != nil {
			var me *MessageError
			if errors.As(err, &me) {
				me.Index = i
				return nil, me
			}
			return nil, &MessageError{Index: i, Reason: err.Error(), Err: err}
		}
	}
	return out, nil
}

// AppendMessageToAGUI appends the AG-UI form of one AAP message, using id
// for it (and ids derived from it for its reasoning messages).
func AppendMessageToAGUI(dst []types.Message, m aap.Message, id string) ([]types.Message, error) {
	switch m := m.(type) {
	case *aap.SystemMessage:
		return append(dst, types.Message{ID: id, Role: types.RoleSystem, Content: m.Content}), nil
	case *aap.UserMessage:
		c, err := userContentToAGUI(m.Content)
		if err != nil {
			return dst, &MessageError{ID: id, Reason: err.Error(), Err: err}
		}
		return append(dst, types.Message{ID: id, Role: types.RoleUser, Content: c}), nil
	case *aap.AssistantMessage:
		return appendAssistantToAGUI(dst, m, id)
	case *aap.ToolMessage:
		return append(dst, types.Message{
			ID: id, Role: types.RoleTool, ToolCallID: m.ToolCallID, Content: ToolContentString(m.Content),
		}), nil
	case *aap.ToolPermissionMessage:
		return dst, &MessageError{ID: id, Reason: "a tool_permission is not a history message; it becomes a resume entry"}
	}
	return dst, &MessageError{ID: id, Reason: fmt.Sprintf("unknown message type %T", m)}
}

func appendAssistantToAGUI(dst []types.Message, m *aap.AssistantMessage, id string) ([]types.Message, error) {
	if !m.Content.IsBlocks() {
		return append(dst, types.Message{ID: id, Role: types.RoleAssistant, Content: m.Content.Text}), nil
	}
	var text strings.Builder
	var calls []types.ToolCall
	n := 0
	// AG-UI has one text per assistant message: separate blocks are joined
	// as paragraphs.
	addText := func(s string) {
		if text.Len() > 0 {
			text.WriteString("\n\n")
		}
		text.WriteString(s)
	}
	for _, b := range m.Content.Blocks {
		switch b := b.(type) {
		case *aap.ThinkingBlock:
			dst = append(dst, types.Message{ID: reasoningMessageID(id, n), Role: types.RoleReasoning, Content: b.Thinking})
			n++
		case *aap.TextBlock:
			addText(b.Text)
		case *aap.ImageBlock:
			// AG-UI assistant content is text only: keep the image as a
			// Markdown image so that nothing is lost from view.
			addText("![image](" + b.URL + ")")
		case *aap.ToolUseBlock:
			args, err := ArgumentsFromInput(b.Input)
			if err != nil {
				return dst, &MessageError{ID: id, Reason: fmt.Sprintf("tool call %q: %v", b.ToolCallID, err), Err: err}
			}
			calls = append(calls, types.ToolCall{
				ID: b.ToolCallID, Type: types.ToolCallTypeFunction,
				Function: types.FunctionCall{Name: b.Name, Arguments: args},
			})
		}
	}
	msg := types.Message{ID: id, Role: types.RoleAssistant, ToolCalls: calls}
	if text.Len() > 0 {
		msg.Content = text.String()
	}
	return append(dst, msg), nil
}

func userContentToAGUI(c aap.Content) (any, error) {
	if !c.IsBlocks() {
		return c.Text, nil
	}
	parts := make([]types.InputContent, 0, len(c.Blocks))
	for i, b := range c.Blocks {
		switch b := b.(type) {
		case *aap.TextBlock:
			parts = append(parts, types.InputContent{Type: types.InputContentTypeText, Text: b.Text})
		case *aap.ImageBlock:
			src, err := imageSource(b.URL)
			if err != nil {
				return nil, fmt.Errorf("content[%d]: %w", i, err)
			}
			parts = append(parts, types.InputContent{Type: types.InputContentTypeImage, Source: src})
		default:
			return nil, fmt.Errorf("content[%d]: a %s block in a user message: %w", i, b.BlockType(), ErrUnsupportedContent)
		}
	}
	return parts, nil
}

// imageSource turns an AAP image URL into an AG-UI source: https URLs stay
// URLs, data: URIs become base64 data with their MIME type (a data: URI
// that is not base64 is percent-decoded and re-encoded as base64).
func imageSource(u string) (*types.InputContentSource, error) {
	if !strings.HasPrefix(u, "data:") {
		return &types.InputContentSource{Type: types.InputContentSourceTypeURL, Value: u}, nil
	}
	meta, payload, ok := strings.Cut(u[len("data:"):], ",")
	if !ok {
		return nil, errors.New("malformed data: URI (no comma)")
	}
	mime, isBase64 := strings.CutSuffix(meta, ";base64")
	if mime == "" {
		mime = "text/plain;charset=US-ASCII" // RFC 2397's default
	}
	if !isBase64 {
		raw, err := url.PathUnescape(payload)
		if err != nil {
			return nil, fmt.Errorf("malformed data: URI: %w", err)
		}
		payload = base64.StdEncoding.EncodeToString([]byte(raw))
	}
	return &types.InputContentSource{Type: types.InputContentSourceTypeData, Value: payload, MimeType: mime}, nil
}

// ToolContentString renders AAP tool-result content as the string AG-UI
// carries: the string itself; text blocks joined in order; and, when there
// are other blocks, the JSON of the whole block list, so nothing is lost.
func ToolContentString(c aap.Content) string {
	if !c.IsBlocks() {
		return c.Text
	}
	for _, b := range c.Blocks {
		if b.BlockType() != aap.BlockText {
			out, err := json.Marshal(c.Blocks)
			if err != nil { // only possible with invalid tool input bytes
				return c.PlainText()
			}
			return string(out)
		}
	}
	return c.PlainText()
}

// MessagesToAAP translates AG-UI messages to AAP history messages.
// developer becomes system; reasoning messages are folded into the
// assistant message that follows them as thinking blocks; activity messages
// are UI-only and skipped. Content AAP cannot carry (audio, video,
// documents) and tool arguments that are not a JSON object are errors
// naming the message: nothing is dropped silently.
func MessagesToAAP(msgs []types.Message) ([]aap.Message, error) {
	out, _, err := MessagesToAAPWithIDs(msgs)
	return out, err
}

// MessagesToAAPWithIDs is MessagesToAAP that also gives, for each AAP
// message it returns, the AG-UI id that message came from: its own; for an
// assistant message holding folded reasoning the assistant's; for
// reasoning that no assistant message follows (it becomes an assistant
// message of thinking alone) the first reasoning message's.
func MessagesToAAPWithIDs(msgs []types.Message) ([]aap.Message, []string, error) {
	out := make([]aap.Message, 0, len(msgs))
	ids := make([]string, 0, len(msgs))
	err := foldMessages(msgs, func(reasoning []int, at int) error {
		thinking, err := thinkingOf(msgs, reasoning)
		if err != nil {
			return err
		}
		if at < 0 { // reasoning no assistant message follows: thinking alone
			out = append(out, &aap.AssistantMessage{Content: aap.BlockContent(thinking...)})
			ids = append(ids, msgs[reasoning[0]].ID)
			return nil
		}
		m, err := messageToAAP(&msgs[at], thinking)
		if err != nil {
			return messageError(err, at, msgs[at].ID)
		}
		out = append(out, m)
		ids = append(ids, msgs[at].ID)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return out, ids, nil
}

// foldMessages is the one rule by which AG-UI messages become AAP
// messages: it calls visit for each AAP message, in order, with the
// indices of the reasoning messages folded into it and the index of the
// message it is made of (-1: reasoning that no assistant message follows,
// an assistant message of thinking alone). Reasoning folds into the
// assistant message after it; before any other message it stands alone;
// activity messages make none. An error of visit ends the fold.
func foldMessages(msgs []types.Message, visit func(reasoning []int, at int) error) error {
	var pending []int
	for i := range msgs {
		switch msgs[i].Role {
		case types.RoleActivity:
			continue
		case types.RoleReasoning:
			pending = append(pending, i)
			continue
		case types.RoleAssistant:
			if err := visit(pending, i); err != nil {
				return err
			}
			pending = pending[:0]
			continue
		}
		if len(pending) > 0 {
			if err := visit(pending, -1); err != nil {
				return err
			}
			pending = pending[:0]
		}
		if err := visit(nil, i); err != nil {
			return err
		}
	}
	if len(pending) > 0 {
		return visit(pending, -1)
	}
	return nil
}

// thinkingOf makes the thinking blocks of the reasoning messages at the
// given indices.
func thinkingOf(msgs []types.Message, reasoning []int) ([]aap.ContentBlock, error) {
	if len(reasoning) == 0 {
		return nil, nil
	}
	thinking := make([]aap.ContentBlock, 0, len(reasoning))
	for _, i := range reasoning {
		s, err := stringContent(msgs[i].Content)
		if err != nil {
			return nil, messageError(err, i, msgs[i].ID)
		}
		thinking = append(thinking, &aap.ThinkingBlock{Thinking: s})
	}
	return thinking, nil
}

// messageError names the message an error is about.
func messageError(err error, i int, id string) error {
	var me *MessageError
	if errors.As(err, &me) {
		me.Index, me.ID = i, id
		return me
	}
	return &MessageError{Index: i, ID: id, Reason: err.Error(), Err: err}
}

// messageToAAP translates one AG-UI message (not reasoning or activity),
// an assistant message with the thinking folded into it.
func messageToAAP(m *types.Message, thinking []aap.ContentBlock) (aap.Message, error) {
	switch m.Role {
	case types.RoleSystem, types.RoleDeveloper:
		s, err := stringContent(m.Content)
		if err != nil {
			return nil, err
		}
		return &aap.SystemMessage{Content: s}, nil
	case types.RoleUser:
		c, err := userContentToAAP(m.Content)
		if err != nil {
			return nil, err
		}
		return &aap.UserMessage{Content: c}, nil
	case types.RoleAssistant:
		return assistantToAAP(m, thinking)
	case types.RoleTool:
		if m.ToolCallID == "" {
			return nil, errors.New("tool message without toolCallId")
		}
		c, err := toolContentToAAP(m.Content, m.Error)
		if err != nil {
			return nil, err
		}
		return &aap.ToolMessage{ToolCallID: m.ToolCallID, Content: c}, nil
	}
	return nil, fmt.Errorf("unknown role %q", m.Role)
}

// toolText folds an AG-UI tool error into the AAP content, which has no
// error field.
func toolText(content, errText string) string {
	switch {
	case errText == "":
		return content
	case content == "":
		return "Error: " + errText
	}
	return "Error: " + errText + "\n\n" + content
}

func assistantToAAP(m *types.Message, thinking []aap.ContentBlock) (*aap.AssistantMessage, error) {
	text, err := stringContent(m.Content)
	if err != nil {
		return nil, err
	}
	if len(thinking) == 0 && len(m.ToolCalls) == 0 {
		return &aap.AssistantMessage{Content: aap.TextContent(text)}, nil
	}
	blocks := thinking
	if text != "" {
		blocks = append(blocks, &aap.TextBlock{Text: text})
	}
	for _, tc := range m.ToolCalls {
		if tc.ID == "" || tc.Function.Name == "" {
			return nil, errors.New("tool call without id or function name")
		}
		in, err := InputFromArguments(tc.ID, tc.Function.Arguments)
		if err != nil {
			return nil, err
		}
		blocks = append(blocks, &aap.ToolUseBlock{ToolCallID: tc.ID, Name: tc.Function.Name, Input: in})
	}
	return &aap.AssistantMessage{Content: aap.BlockContent(blocks...)}, nil
}

// stringContent accepts a string or absent content.
func stringContent(c any) (string, error) {
	c, err := agui.DecodeContent(c)
	if err != nil {
		return "", err
	}
	switch c := c.(type) {
	case nil:
		return "", nil
	case string:
		return c, nil
	}
	return "", fmt.Errorf("content must be a string, got %s", valueKind(c))
}

func valueKind(v any) string {
	switch v.(type) {
	case []any, []types.InputContent:
		return "an array"
	case map[string]any:
		return "an object"
	case float64, json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return fmt.Sprintf("%T", v)
}

func userContentToAAP(c any) (aap.Content, error) {
	var parts []types.InputContent
	c, err := agui.DecodeContent(c)
	if err != nil {
		return aap.Content{}, err
	}
	switch c := c.(type) {
	case nil:
		return aap.TextContent(""), nil
	case string:
		return aap.TextContent(c), nil
	case []types.InputContent:
		parts = c
	case []any:
		raw, err := json.Marshal(c)
		if err == nil {
			err = json.Unmarshal(raw, &parts)
		}
		if err != nil {
			return aap.Content{}, fmt.Errorf("content: %w", err)
		}
	default:
		return aap.Content{}, fmt.Errorf("content must be a string or an array of input parts, got %s", valueKind(c))
	}
	blocks := make([]aap.ContentBlock, 0, len(parts))
	for i, p := range parts {
		b, err := inputPartToAAP(p)
		if err != nil {
			return aap.Content{}, fmt.Errorf("content[%d]: %w", i, err)
		}
		blocks = append(blocks, b)
	}
	return aap.BlockContent(blocks...), nil
}

func inputPartToAAP(p types.InputContent) (aap.ContentBlock, error) {
	switch p.Type {
	case types.InputContentTypeText:
		return &aap.TextBlock{Text: p.Text}, nil
	case types.InputContentTypeImage:
		if p.Source == nil {
			return nil, errors.New("image without source")
		}
		return imageFromSource(p.Source.Type, p.Source.Value, p.Source.MimeType)
	case types.InputContentTypeBinary:
		if !strings.HasPrefix(p.MimeType, "image/") {
			return nil, fmt.Errorf("binary content of type %q: %w", p.MimeType, ErrUnsupportedContent)
		}
		switch {
		case p.URL != "":
			return imageFromSource(types.InputContentSourceTypeURL, p.URL, p.MimeType)
		case p.Data != "":
			return imageFromSource(types.InputContentSourceTypeData, p.Data, p.MimeType)
		}
		return nil, errors.New("binary image given only by id: AAP needs a URL or the data")
	case types.InputContentTypeAudio, types.InputContentTypeVideo, types.InputContentTypeDocument:
		return nil, fmt.Errorf("%s input: %w", p.Type, ErrUnsupportedContent)
	}
	return nil, fmt.Errorf("unknown input content type %q", p.Type)
}

func imageFromSource(kind, value, mime string) (aap.ContentBlock, error) {
	switch kind {
	case types.InputContentSourceTypeURL:
		if !strings.HasPrefix(value, "https://") && !strings.HasPrefix(value, "data:") {
			return nil, fmt.Errorf("image URL %q: AAP takes only https:// URLs and data: URIs", truncate(value, 64))
		}
		return &aap.ImageBlock{URL: value}, nil
	case types.InputContentSourceTypeData:
		if mime == "" {
			return nil, errors.New("image data without mimeType")
		}
		if strings.ContainsAny(mime, ",") {
			return nil, fmt.Errorf("invalid image mimeType %q", mime)
		}
		var b bytes.Buffer
		b.Grow(len("data:;base64,") + len(mime) + len(value))
		b.WriteString("data:")
		b.WriteString(mime)
		b.WriteString(";base64,")
		b.WriteString(value)
		return &aap.ImageBlock{URL: b.String()}, nil
	}
	return nil, fmt.Errorf("unknown image source type %q", kind)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
