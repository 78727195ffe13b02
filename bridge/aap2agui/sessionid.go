package aap2agui

import (
	"strconv"

	"github.com/gin-gonic/gin"
)

// maxSessionIDLen is the longest session id a path may hold.
const maxSessionIDLen = 128

// sessionIDRule says what a session id in a path must be; this server's
// own ids are sess_ and 32 hex digits.
const sessionIDRule = "a session id is 1 to 128 letters, digits, '_', '-' or '.' (this server's ids read sess_ and 32 hex digits, as POST /sessions returns them)"

// checkSessionID answers 400 invalid_session_id, naming the rule, to a
// request whose :id is empty (a client that lost the id it was given:
// /sessions//turns) or cannot be a session id, rather than a 404 that
// would say the session no longer exists.
func checkSessionID(c *gin.Context) error {
	id := c.Param("id")
	if id == "" {
		return invalid("invalid_session_id", "the session id in the path is empty: "+sessionIDRule)
	}
	if !validSessionID(id) {
		shown := id
		if len(shown) > 40 {
			shown = shown[:40] + "…"
		}
		return invalid("invalid_session_id", "the session id "+strconv.Quote(shown)+" is malformed: "+sessionIDRule)
	}
	return nil
}

func validSessionID(id string) bool {
	if len(id) == 0 || len(id) > maxSessionIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch b := id[i]; {
		case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9', b == '_', b == '-', b == '.':
		default:
			return false
		}
	}
	return true
}
