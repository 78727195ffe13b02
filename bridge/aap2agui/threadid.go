package aap2agui

import (
	"fmt"

	"github.com/google/uuid"
)

// ThreadIDs says which threadId a session's runs carry (Config.ThreadIDs,
// --thread-id).
type ThreadIDs string

const (
	// ThreadIDsUUID (the default, also the zero value): the threadId is a
	// UUID derived from the session id (ThreadID): some frameworks accept
	// only UUIDs (the LangGraph API server, behind @ag-ui/langgraph).
	ThreadIDsUUID ThreadIDs = "uuid"
	// ThreadIDsSession: the threadId is the session id itself
	// (sess_<32 hex>), as earlier releases sent it: for an agent that
	// already keeps threads under those ids.
	ThreadIDsSession ThreadIDs = "session"
)

// ParseThreadIDs reads the value of --thread-id.
func ParseThreadIDs(s string) (ThreadIDs, error) {
	switch ThreadIDs(s) {
	case "", ThreadIDsUUID:
		return ThreadIDsUUID, nil
	case ThreadIDsSession:
		return ThreadIDsSession, nil
	}
	return "", fmt.Errorf("thread ids %q: want %q (a UUID derived from the session id) or %q (the session id itself)", s, ThreadIDsUUID, ThreadIDsSession)
}

// ThreadNamespace is the UUID namespace of the thread ids derived from
// session ids: the name-based (SHA-1, version 5) UUID of the URL
// "https://github.com/aapagui/aapagui#thread-id" in the URL namespace,
// 57ea9622-128f-5e78-8f1c-9ce22bb36e39.
var ThreadNamespace = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://github.com/aapagui/aapagui#thread-id"))

// ThreadID is the AG-UI threadId of the session with the given id under
// the default rule (ThreadIDsUUID): the name-based (SHA-1, version 5) UUID
// of the session id in ThreadNamespace, in its lowercase 36-character
// form. It depends on the session id alone, so a session keeps its
// threadId for its whole life, on every replica and across versions,
// sessions stored before the rule included. In Python:
// uuid.uuid5(uuid.UUID("57ea9622-128f-5e78-8f1c-9ce22bb36e39"), session_id).
func ThreadID(sessionID string) string {
	return uuid.NewSHA1(ThreadNamespace, []byte(sessionID)).String()
}

// runKey is the run-log key of a session's turns.
func runKey(sessionID string) string { return "session/" + sessionID }
