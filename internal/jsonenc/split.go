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
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return nil, false
	}
	elems = []json.RawMessage{}
	if i = SkipSpace(b, i+1); i < len(b) && b[i] == ']' {
		return elems, SkipSpace(b, i+1) == len(b)
	}
	for i < len(b) {
		end, ok := SkipValue(b, i)
		if !ok {
			return nil, false
		}
		elems = append(elems, b[i:end:end])
		if i = SkipSpace(b, end); i >= len(b) {
			return nil, false
		}
		switch b[i] {
		case ',':
			i = SkipSpace(b, i+1)
		case ']':
			return elems, SkipSpace(b, i+1) == len(b)
		default:
			return nil, false
		}
	}
	return nil, false
}

// SkipValue returns the index just past the JSON value that starts at
// d[i] (i < len(d)): a string by its closing quote, an object or an array
// by the bracket that closes it (strings skipped, brackets counted alike),
// anything else up to the next delimiter. It only finds the value's end;
// what the value holds is left to a decoder.
func SkipValue(d []byte, i int) (int, bool) {
	switch d[i] {
	case '"':
		end := SkipString(d, i+1)
		return end + 1, end >= 0
	case '{', '[':
		depth := 0
		for ; i < len(d); i++ {
			switch d[i] {
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			case '"':
				end := SkipString(d, i+1)
				if end < 0 {
					return 0, false
				}
				i = end
			}
		}
		return 0, false
	}
	j := i
	for j < len(d) && !delimiter[d[j]] {
		j++
	}
	return j, j > i
}

// delimiter are the bytes that end a number or a literal.
var delimiter = [256]bool{' ': true, '\t': true, '\n': true, '\r': true, ',': true, '}': true, ']': true, ':': true, '"': true, '{': true, '[': true}

// SkipString returns the index of the quote that closes the string whose
// content starts at d[i] (the next quote after an even run of
// backslashes), or -1. It does not validate the content.
func SkipString(d []byte, i int) int {
	start := i
	for {
		j := bytes.IndexByte(d[i:], '"')
		if j < 0 {
			return -1
		}
		j += i
		k := j
		for k > start && d[k-1] == '\\' {
			k--
		}
		if (j-k)%2 == 0 {
			return j
		}
		i = j + 1
	}
}

// SkipSpace returns the index of the first byte of d from i on that is
// not JSON whitespace.
func SkipSpace(d []byte, i int) int {
	for i < len(d) {
		switch d[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}
