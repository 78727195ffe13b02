package redact

import (
	"net/url"
	"strings"
)

// Mask stands for a value left out.
const Mask = "***"

// notShown stands for a string that could not be parsed, and so not
// redacted with care: it is not shown at all.
const notShown = "(not shown: it does not parse)"

// URL renders the URL s with its password, every value of its query and
// its fragment replaced by Mask (the query's keys and order are kept; an
// item without a value is masked whole). A string that does not parse as
// a URL is not shown.
func URL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return notShown
	}
	return redactURL(u)
}

func redactURL(u *url.URL) string {
	c := *u
	if c.User != nil {
		if _, has := c.User.Password(); has {
			c.User = url.UserPassword(c.User.Username(), Mask)
		}
	}
	if c.RawQuery != "" {
		c.RawQuery = maskQuery(c.RawQuery)
	}
	if c.Fragment != "" || c.RawFragment != "" {
		c.Fragment, c.RawFragment = Mask, ""
	}
	// String escapes the mask in a password ('*' is %2A there); it is
	// no secret, and reads better as it is.
	return strings.Replace(c.String(), ":%2A%2A%2A@", ":"+Mask+"@", 1)
}

// maskQuery keeps each key of a raw query and masks its value; an item
// without '=' (?<token>) may be a value alone, and is masked whole.
func maskQuery(raw string) string {
	parts := strings.Split(raw, "&")
	for i, p := range parts {
		if k, _, ok := strings.Cut(p, "="); ok {
			parts[i] = k + "=" + Mask
		} else if p != "" {
			parts[i] = Mask
		}
	}
	return strings.Join(parts, "&")
}

// DSN renders a store spec or a PostgreSQL DSN: a URL (postgres://,
// postgresql://, sqlite:, memory:) as URL renders it; key=value pairs
// (host=db password=secret) with the values of password and sslpassword
// replaced by Mask; anything else as it is, unless it does not parse.
func DSN(s string) string {
	u, err := url.Parse(s)
	if err == nil && u.Scheme != "" {
		return redactURL(u)
	}
	if strings.Contains(s, "=") {
		return keyValues(s)
	}
	if err != nil {
		return notShown
	}
	return s
}

// secretKeys are the keys of a key=value DSN whose values are secret.
var secretKeys = map[string]bool{"password": true, "sslpassword": true}

// keyValues redacts a key=value DSN as libpq reads one: pairs separated
// by white space, white space allowed around '=', a value either bare
// (up to white space) or single-quoted, with \ escaping the next byte in
// both. A DSN that does not read so is not shown.
func keyValues(s string) string {
	var out []string
	for rest := strings.TrimLeft(s, " \t\r\n\f\v"); rest != ""; rest = strings.TrimLeft(rest, " \t\r\n\f\v") {
		eq := strings.IndexByte(rest, '=')
		if eq <= 0 {
			return notShown
		}
		key := strings.TrimRight(rest[:eq], " \t\r\n\f\v")
		if key == "" || strings.ContainsAny(key, " \t\r\n\f\v'\\") {
			return notShown
		}
		value, after, ok := dsnValue(strings.TrimLeft(rest[eq+1:], " \t\r\n\f\v"))
		if !ok {
			return notShown
		}
		if secretKeys[strings.ToLower(key)] {
			value = Mask
		}
		out = append(out, key+"="+value)
		rest = after
	}
	return strings.Join(out, " ")
}

// dsnValue reads one value at the start of s, as written (quotes and
// escapes kept), and returns it with what follows it.
func dsnValue(s string) (value, rest string, ok bool) {
	quoted := strings.HasPrefix(s, "'")
	i := 0
	if quoted {
		i = 1
	}
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			i++
		case quoted && c == '\'':
			return s[:i+1], s[i+1:], true
		case !quoted && strings.IndexByte(" \t\r\n\f\v", c) >= 0:
			return s[:i], s[i:], true
		}
	}
	if quoted {
		return "", "", false
	}
	return s, "", true
}
