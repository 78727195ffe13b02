package jsonenc

import (
	"bytes"
	"encoding/json"
)

// SplitArray returns the elements of the JSON array b, each the bytes of
// b it spans, found in one pass: the array's brackets, commas and
// whitespace are checked, and each element's extent (its strings and
// nesting), but not what an element holds, which the caller decodes. A
// caller that decodes every element strictly has then read b as strictly
// as encoding/json does (an element whose brackets do not match is not
// valid JSON). ok is false for anything that is not such an array.
func SplitArray(b []byte) (elems []json.RawMessage, ok bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return nil, false
	}
	elems = []json.RawMessage{}
	if i = skipSpace(b, i+1); i < len(b) && b[i] == ']' {
		return elems, skipSpace(b, i+1) == len(b)
	}
	for {
		end, ok := valueEnd(b, i)
		if !ok {
			return nil, false
		}
		elems = append(elems, b[i:end:end])
		if i = skipSpace(b, end); i >= len(b) {
			return nil, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case ']':
			return elems, skipSpace(b, i+1) == len(b)
		default:
			return nil, false
		}
	}
}

// valueEnd is the index just past the value that starts at b[i]: a string,
// an object or an array by its closing quote or bracket, anything else up
// to the next delimiter.
func valueEnd(b []byte, i int) (int, bool) {
	depth := 0
	for i < len(b) {
		switch b[i] {
		case '"':
			end, ok := stringEnd(b, i+1)
			if !ok {
				return 0, false
			}
			if i = end + 1; depth == 0 {
				return i, true
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth <= 0 {
				return i + 1, depth == 0
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i, false // nothing before it
			}
		default:
			if depth == 0 {
				j := i
				for j < len(b) && !delimiter(b[j]) {
					j++
				}
				return j, true
			}
		}
		i++
	}
	return 0, false
}

// stringEnd is the index of the quote that closes the string whose content
// starts at b[i]: the next quote after an even run of backslashes.
func stringEnd(b []byte, i int) (int, bool) {
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return 0, false
		}
		j += i
		k := j
		for k > i && b[k-1] == '\\' {
			k--
		}
		if (j-k)%2 == 0 {
			return j, true
		}
		i = j + 1
	}
}

func delimiter(c byte) bool {
	switch c {
	case ',', ']', '}', ' ', '\t', '\n', '\r', '"', '[', '{':
		return true
	}
	return false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}
