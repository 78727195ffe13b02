package edge

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/rs/zerolog"

	"github.com/aapagui/aapagui/bridge/internal/fault"
)

func init() { gin.SetMode(gin.ReleaseMode) }

// NewEngine returns the gin engine both bridges start from: one log line
// per request, panics answered with a JSON 500, request bodies capped at
// maxBody, JSON 404 and 405 answers, and /healthz. The outer middleware
// (tracing, metrics) runs first, so that it sees every request; extra
// middleware (CORS, guards) runs after the request log, before the body
// limit.
func NewEngine(log zerolog.Logger, maxBody int64, outer []gin.HandlerFunc, extra ...gin.HandlerFunc) *gin.Engine {
	e := gin.New()
	e.HandleMethodNotAllowed = true
	// A trailing slash or a near-miss path gets the JSON 404, never an
	// HTML redirect that a client would follow with a changed method.
	e.RedirectTrailingSlash = false
	e.RedirectFixedPath = false
	e.Use(outer...)
	e.Use(RequestLog(log), gin.CustomRecovery(func(c *gin.Context, _ any) {
		Reply(c, fault.Fail(fault.KindInternal, "internal", "internal error"))
	}))
	e.Use(extra...)
	e.Use(BodyLimit(maxBody))
	e.NoRoute(func(c *gin.Context) {
		Reply(c, fault.Fail(fault.KindNotFound, "not_found", "no such endpoint: "+c.Request.URL.Path))
	})
	e.NoMethod(func(c *gin.Context) {
		Reply(c, fault.Fail(fault.KindMethodNotAllowed, "method_not_allowed", c.Request.Method+" is not allowed on "+c.Request.URL.Path))
	})
	e.GET("/healthz", func(c *gin.Context) { c.String(http.StatusOK, "ok\n") })
	return e
}
