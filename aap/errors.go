package aap

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// DecodeError reports AAP JSON that is malformed or breaks the protocol's
// rules. Field is a JSON path such as "messages[0].content[1].type"; it is
// empty when the problem is with the document as a whole.
type DecodeError struct {
	Field  string
	Reason string
	Err    error // the underlying encoding/json error, if any
}

// Error describes the failure.
func (e *DecodeError) Error() string {
	if e.Field == "" {
		return "aap: " + e.Reason
	}
	return "aap: " + e.Field + ": " + e.Reason
}

// Unwrap returns the underlying error.
func (e *DecodeError) Unwrap() error { return e.Err }

func fieldErr(field, format string, args ...any) *DecodeError {
	return &DecodeError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// within prefixes the field path of a *DecodeError (or turns any other error
// into one) so that errors from nested values name their full location.
func within(prefix string, err error) error {
	if err == nil {
		return nil
	}
	var de *DecodeError
	if errors.As(err, &de) {
		field := prefix
		switch {
		case de.Field == "":
		case strings.HasPrefix(de.Field, "["):
			field += de.Field
		case prefix == "":
			field = de.Field
		default:
			field += "." + de.Field
		}
		return &DecodeError{Field: field, Reason: de.Reason, Err: de.Err}
	}
	return jsonErr(prefix, err)
}

// jsonErr turns an encoding/json error into a *DecodeError with a readable
// reason, keeping the original for errors.As.
func jsonErr(prefix string, err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	var de *DecodeError
	switch {
	case errors.As(err, &de):
		// An UnmarshalJSON method of a nested value failed; encoding/json
		// does not say where, so the path is only as deep as prefix.
		return within(prefix, de)
	case errors.As(err, &te):
		field := prefix
		if te.Field != "" {
			if field != "" {
				field += "."
			}
			field += te.Field
		}
		return &DecodeError{Field: field, Reason: "expected " + jsonKind(te.Type.Kind().String()) + ", got " + te.Value, Err: err}
	case errors.As(err, &se):
		return &DecodeError{Field: prefix, Reason: "malformed JSON at byte " + strconv.FormatInt(se.Offset, 10) + ": " + se.Error(), Err: err}
	}
	return &DecodeError{Field: prefix, Reason: err.Error(), Err: err}
}

func jsonKind(k string) string {
	switch k {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "map", "struct":
		return "an object"
	case "int", "int64", "float64", "uint", "int32":
		return "a number"
	}
	return k
}

func index(name string, i int) string { return name + "[" + strconv.Itoa(i) + "]" }

// decodeList decodes each element of a JSON array with decode, naming the
// failing element's index in the error.
func decodeList[T any](raws []json.RawMessage, decode func([]byte, *T) error) ([]T, error) {
	if raws == nil {
		return nil, nil
	}
	out := make([]T, len(raws))
	for i, raw := range raws {
		if err := decode(raw, &out[i]); err != nil {
			return nil, within(index("", i), err)
		}
	}
	return out, nil
}

func unmarshalInto[T any, P interface {
	*T
	json.Unmarshaler
}](data []byte, v *T) error {
	return P(v).UnmarshalJSON(data)
}
