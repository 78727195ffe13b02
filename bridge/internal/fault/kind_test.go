package fault_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"

	"github.com/aapagui/aapagui/bridge/internal/edge"
	"github.com/aapagui/aapagui/bridge/internal/fault"
)

// Reply answers each kind with its status; a lock held and a limit add
// Retry-After.
func TestReply(t *testing.T) {
	for _, tc := range []struct {
		name   string
		f      *fault.Failure
		status int
		retry  string
		body   string
	}{
		{"invalid", fault.Fail(fault.KindInvalid, "invalid_input", "no"), 400, "", `{"error":{"code":"invalid_input","message":"no"}}`},
		{"upstream", fault.Fail(fault.KindUpstream, "upstream_error", "x"), 502, "", `{"error":{"code":"upstream_error","message":"x"}}`},
		{"zero kind", &fault.Failure{Code: "internal", Message: "x"}, 500, "", `{"error":{"code":"internal","message":"x"}}`},
		{"held", fault.Locked("run_in_progress", "busy", 1500*time.Millisecond), 409, "2", `{"error":{"code":"run_in_progress","message":"busy","leaseRemainingMs":1500}}`},
		{"too many", fault.Throttled("too_many_runs", "slow down", 10*time.Millisecond), 429, "1", `{"error":{"code":"too_many_runs","message":"slow down"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			c, _ := gin.CreateTestContext(rec)
			c.Request = httptest.NewRequest(http.MethodGet, "/", nil)
			edge.Reply(c, tc.f)
			assert.Equal(t, tc.status, rec.Code)
			assert.Equal(t, tc.retry, rec.Header().Get("Retry-After"))
			assert.JSONEq(t, tc.body, rec.Body.String())
			assert.True(t, c.IsAborted())
		})
	}
}
