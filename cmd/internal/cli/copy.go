package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/rs/zerolog"

	"github.com/aapagui/aapagui/internal/redact"
	"github.com/aapagui/aapagui/store/postgres"
	"github.com/aapagui/aapagui/store/sqlite"
	"github.com/aapagui/aapagui/store/transfer"
)

// CopyStore copies everything from the SQLite store named by from
// ("sqlite:<file>") into the PostgreSQL store named by to, and logs what it
// copied. It is what --copy-from does.
func CopyStore(log zerolog.Logger, from, to string) error {
	path, ok := strings.CutPrefix(from, "sqlite:")
	if !ok || path == "" {
		return fmt.Errorf("--copy-from %q: want sqlite:<file>", from)
	}
	if !strings.HasPrefix(to, "postgres://") && !strings.HasPrefix(to, "postgresql://") {
		return fmt.Errorf("--copy-from copies into a PostgreSQL --store (postgres://…), not %q", redact.DSN(to))
	}
	src, err := sqlite.Open(path)
	if err != nil {
		return err
	}
	defer src.Close()
	ctx, cancel := context.WithTimeout(context.Background(), transfer.Timeout)
	defer cancel()
	dst, err := postgres.Open(ctx, to)
	if err != nil {
		return err
	}
	defer dst.Close()
	rep, err := transfer.Copy(ctx, dst, src)
	if err != nil {
		return err
	}
	log.Info().Str("from", from).Str("to", redact.DSN(to)).
		Int("sessions", rep.Sessions).Int("messages", rep.Messages).Int("threads", rep.Threads).Int("record_messages", rep.RecordMessages).
		Int("sessions_already_there", rep.SkippedSessions).Int("threads_already_there", rep.SkippedThreads).
		Msg("copied the store")
	return nil
}
