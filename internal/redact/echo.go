package redact

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
)

// Echoed returns text, what an upstream answered to a request that sent
// the header sent (an error body, say), with every credential it may
// echo replaced by Mask, so that it can be logged or quoted: a server or
// proxy that echoes the request's headers in its error (an echo server,
// a misconfigured proxy) would otherwise put the API key into the log.
// Masked are:
//
//   - the values of sent's headers that may carry a credential (all but
//     those of content negotiation, see plainHeaders), and the
//     credential of an Authorization value without its scheme, as they
//     are and escaped (JSON, at any depth, "\/" and "\u002f" included;
//     URL escapes); values shorter than minSecret bytes are left, as no
//     credential and as what masking would garble the message with;
//   - whatever credential text names, known or not: the token after
//     "Bearer" or "Basic", and the value of an Authorization,
//     Proxy-Authorization, X-Api-Key, Api-Key or Cookie header or field,
//     as "Name: value", "name=value" or JSON ("name":"value").
func Echoed(text string, sent http.Header) string {
	if text == "" {
		return text
	}
	if re := secretsPattern(sent); re != nil {
		text = re.ReplaceAllLiteralString(text, Mask)
	}
	text = namedValue.ReplaceAllString(text, "${1}"+Mask)
	return schemeToken.ReplaceAllString(text, "${1} "+Mask)
}

// minSecret is the length of the shortest header value Echoed masks.
const minSecret = 6

// plainHeaders are the headers a client sends that hold no credential.
var plainHeaders = map[string]bool{
	"Accept": true, "Accept-Encoding": true, "Accept-Language": true,
	"Content-Type": true, "Content-Length": true, "Content-Encoding": true,
	"Connection": true, "User-Agent": true, "Last-Event-Id": true,
}

var (
	// schemeToken is an HTTP credential with its scheme (group 1):
	// "Bearer <token>", "Basic <token>", the space and the token escaped
	// or not.
	schemeToken = regexp.MustCompile(`(?i)\b(bearer|basic)(?:\s|\+|%20|\\*u0020|\\+[tn])+(?:[A-Za-z0-9._~+/=:-]|\\+/|%[0-9A-Fa-f]{2})+`)
	// namedValue is the value of a header or field that holds a
	// credential, after its name and separator (group 1):
	// "Authorization: …", "authorization=…", JSON's "authorization":"…"
	// or "authorization":["…"], escaped in a string (at any depth) or
	// not. The value ends at a quote, a backslash (but that of an
	// escaped "/"), a line's end, a comma or a closing brace or bracket.
	namedValue = regexp.MustCompile(`(?i)((?:(?:proxy-)?authorization|x-api-key|api[-_]key|cookie)\\*"?\s*[:=]\s*\[?\s*\\*"?)(?:[^"\\\r\n,}\]]|\\+/)+`)
)

// secretsPattern matches sent's credentials (see Echoed) in any of their
// escaped forms, the longest first; nil when there is none.
func secretsPattern(sent http.Header) *regexp.Regexp {
	var secrets []string
	add := func(v string) {
		if v = strings.TrimSpace(v); len(v) >= minSecret {
			secrets = append(secrets, v)
		}
	}
	for name, vs := range sent {
		name = http.CanonicalHeaderKey(name)
		if plainHeaders[name] {
			continue
		}
		for _, v := range vs {
			add(v)
			if name == "Authorization" || name == "Proxy-Authorization" {
				if _, cred, ok := strings.Cut(strings.TrimSpace(v), " "); ok {
					add(cred)
				}
			}
		}
	}
	if len(secrets) == 0 {
		return nil
	}
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	alts := make([]string, len(secrets))
	for i, s := range secrets {
		alts[i] = escapedForms(s)
	}
	return regexp.MustCompile(strings.Join(alts, "|"))
}

// escapedForms is a pattern of s as it is or escaped: each byte but a
// letter or digit as it is after any number of backslashes (JSON and
// JSON in JSON), as \u00XX or %XX; a space also as "+".
func escapedForms(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			b.WriteByte(c)
			continue
		}
		hex := fmt.Sprintf("%02[1]x|%02[1]X", c)
		fmt.Fprintf(&b, `(?:\\*%s|\\*u00(?:%s)|%%(?:%s)`, regexp.QuoteMeta(string(c)), hex, hex)
		if c == ' ' {
			b.WriteString(`|\+`)
		}
		b.WriteByte(')')
	}
	return b.String()
}
