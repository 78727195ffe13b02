package sse

import (
	"bytes"
	"strings"
)

// AppendEvent appends one SSE frame to dst and returns the extended buffer:
// an `event: name` line (omitted when name is ""), one `data: ` line per line
// of data, and the blank line that dispatches the event. All line breaks it
// writes are LF.
//
// data is split on "\r\n", "\r" and "\n", the line breaks every SSE reader
// recognises, so any data survives a spec-following reader except that its
// line breaks come back as "\n". Data without line breaks (the usual case:
// compact JSON) becomes a single `data: ` line, and AppendEvent does not
// allocate when dst has room. Empty data is written as one empty `data: `
// line, which readers dispatch with empty data ([Read] skips it).
//
// An event name cannot span lines, so CR and LF bytes are removed from name;
// a name made only of them is treated as "".
func AppendEvent(dst []byte, name string, data []byte) []byte {
	if name != "" {
		dst = appendName(dst, name)
	}
	if bytes.IndexByte(data, '\n') < 0 && bytes.IndexByte(data, '\r') < 0 {
		dst = append(dst, "data: "...)
		dst = append(dst, data...)
		return append(dst, '\n', '\n')
	}
	for {
		i := 0
		for i < len(data) && data[i] != '\n' && data[i] != '\r' {
			i++
		}
		dst = append(dst, "data: "...)
		dst = append(dst, data[:i]...)
		dst = append(dst, '\n')
		if i == len(data) {
			break
		}
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	return append(dst, '\n')
}

func appendName(dst []byte, name string) []byte {
	if strings.IndexByte(name, '\n') < 0 && strings.IndexByte(name, '\r') < 0 {
		dst = append(dst, "event: "...)
		dst = append(dst, name...)
		return append(dst, '\n')
	}
	if strings.Trim(name, "\r\n") == "" {
		return dst
	}
	dst = append(dst, "event: "...)
	for i := 0; i < len(name); i++ {
		if c := name[i]; c != '\n' && c != '\r' {
			dst = append(dst, c)
		}
	}
	return append(dst, '\n')
}
