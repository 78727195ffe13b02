package demo

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aapagui/aapagui/aap"
)

// Kind is what the script does with a message.
type Kind int

// The script's actions, in the order its rules are tried.
const (
	Echo Kind = iota
	Fail
	Think
	Weather
	Search
	Long
)

// MaxLong caps "long <n>".
const MaxLong = 1_000_000

// Action is the script's decision for one user message.
type Action struct {
	Kind Kind
	// Arg is the place (Weather), the query (Search), or the message itself
	// (Echo, Think).
	Arg string
	// N is the number of deltas (Long).
	N int
}

// Decide applies the script to the newest user message.
func Decide(message string) Action {
	lower := strings.ToLower(message)
	switch {
	case strings.Contains(lower, "fail"):
		return Action{Kind: Fail}
	case strings.Contains(lower, "think"):
		return Action{Kind: Think, Arg: message}
	}
	if i := strings.Index(lower, "weather in "); i >= 0 {
		if place := cleanArg(message[i+len("weather in "):]); place != "" {
			return Action{Kind: Weather, Arg: place}
		}
	}
	if i := strings.Index(lower, "search "); i >= 0 {
		if q := cleanArg(message[i+len("search "):]); q != "" {
			return Action{Kind: Search, Arg: q}
		}
	}
	if i := strings.Index(lower, "long "); i >= 0 {
		fields := strings.Fields(lower[i+len("long "):])
		if len(fields) > 0 {
			if n, err := strconv.Atoi(fields[0]); err == nil && n > 0 {
				return Action{Kind: Long, N: min(n, MaxLong)}
			}
		}
	}
	return Action{Kind: Echo, Arg: message}
}

// cleanArg trims spaces and trailing punctuation from a place or query.
func cleanArg(s string) string {
	return strings.TrimRight(strings.TrimSpace(s), "?!.,;: ")
}

// Texts the script says.
const (
	FailPrefix    = "Starting…"
	FailMessage   = "The demo agent failed on purpose."
	DoneThinking  = "Done thinking."
	NoWeatherTool = "I cannot check the weather: the application did not give me a get_weather tool."
	NoSearchTool  = "I cannot search: web_search is not enabled for this session."
)

// ThinkingText is the reasoning for a "think" message.
func ThinkingText(message string) string { return "Thinking about: " + message }

// EchoText is the answer to any other message.
func EchoText(message string) string { return "You said: " + message }

// WeatherText is the answer once get_weather has returned.
func WeatherText(place, result string) string { return "The weather in " + place + ": " + result }

// ResultText is the answer to the result of a client tool other than
// get_weather.
func ResultText(result string) string { return "Thanks, I got the result: " + result }

// SearchResult is what the web_search tool returns.
func SearchResult(query string) string {
	return "Results for " + query + ": the demo index has three pages about " + query + "."
}

// SearchAnswer is the answer after a search.
func SearchAnswer(result string) string { return "Here is what I found. " + result }

// DeniedResult is the result of a search the user did not allow, in AAP's
// wording for a denied tool call.
func DeniedResult(reason string) string { return aap.DeniedResult(reason) }

// DeniedText is the answer after a denied search.
func DeniedText(reason string) string {
	if reason == "" {
		reason = "no reason given"
	}
	return "Search was not allowed: " + reason
}

// LongWord is the i-th (from 0) delta of "long <n>".
func LongWord(i int) string {
	if i == 0 {
		return "word"
	}
	return " word"
}

// Chunks splits s into the deltas it is streamed in: one per word (with
// its following space), and never fewer than three when s has at least
// three characters.
func Chunks(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, ' ')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	if len(out) >= 3 || utf8.RuneCountInString(strings.Join(out, "")) < 3 {
		return out
	}
	whole := strings.Join(out, "")
	n := utf8.RuneCountInString(whole)
	var parts []string
	start, count := 0, 0
	for i := range whole {
		if count > 0 && count%((n+2)/3) == 0 && len(parts) < 2 {
			parts = append(parts, whole[start:i])
			start = i
		}
		count++
	}
	return append(parts, whole[start:])
}

// ArgChunks splits tool arguments (JSON text) into the argument deltas
// they are streamed in: three pieces, never empty.
func ArgChunks(args string) []string {
	if len(args) < 3 {
		return []string{args}
	}
	a, b := runeStart(args, len(args)/3), runeStart(args, 2*len(args)/3)
	if a == 0 || b <= a {
		return []string{args}
	}
	return []string{args[:a], args[a:b], args[b:]}
}

// runeStart moves i back to the start of the rune it falls in.
func runeStart(s string, i int) int {
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}
