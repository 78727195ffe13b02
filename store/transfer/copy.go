package transfer

import (
	"context"
	"fmt"
	"time"

	"github.com/aapagui/aapagui/store/internal/rowcopy"
	"github.com/aapagui/aapagui/store/postgres"
	"github.com/aapagui/aapagui/store/sqlite"
)

// Report counts what Copy did.
type Report struct {
	// Sessions and Threads were copied; SkippedSessions and SkippedThreads
	// were already in the destination (same id) and were left as they are.
	// Messages are the copied sessions' history entries, RecordMessages
	// the messages of the copied threads' records.
	Sessions, SkippedSessions int
	Messages                  int
	Threads, SkippedThreads   int
	RecordMessages            int
}

// Timeout bounds a copy started from the command line.
const Timeout = time.Hour

// Copy copies every session (with its history, state and open interrupts)
// and every thread (with its record) of a SQLite store into a PostgreSQL
// store, in one transaction: a copy that fails leaves the destination as
// it was. Turn locks and run logs are not copied: a run log serves the
// clients of its run, gone once the programs are stopped for the copy. A
// session or thread whose id the destination already has is skipped, so
// running Copy again copies only what is new. Sessions keep their
// listing order; into an empty destination they keep their seq too, so
// that listing cursors stay valid.
//
// Stop the programs using src first: what they write during the copy may
// be missed.
func Copy(ctx context.Context, dst *postgres.Store, src *sqlite.Store) (Report, error) {
	var rep Report
	from := rowcopy.FromSQLite(src)
	err := rowcopy.IntoPostgres(dst)(ctx, func(tx rowcopy.Tx) error {
		if err := copySessions(ctx, tx, from, &rep); err != nil {
			return err
		}
		return copyThreads(ctx, tx, from, &rep)
	})
	if err != nil {
		return Report{}, fmt.Errorf("store: copy: %w", err)
	}
	return rep, nil
}

// copySessions copies every session of from, with its history, into tx,
// and counts them in rep. Into a destination without sessions they keep
// their seq, and new sessions continue after them.
func copySessions(ctx context.Context, tx rowcopy.Tx, from rowcopy.Source, rep *Report) error {
	has, err := tx.HasSessions(ctx)
	if err != nil {
		return err
	}
	keepSeq := !has
	sessions, err := from.Sessions(ctx)
	if err != nil {
		return err
	}
	for _, s := range sessions {
		hist, err := from.History(ctx, s.ID)
		if err != nil {
			return err
		}
		copied, err := tx.InsertSession(ctx, s, hist, keepSeq)
		if err != nil {
			return fmt.Errorf("session %s: %w", s.ID, err)
		}
		if !copied {
			rep.SkippedSessions++
			continue
		}
		rep.Sessions++
		rep.Messages += len(hist)
	}
	if keepSeq && len(sessions) > 0 {
		return tx.ContinueSeq(ctx)
	}
	return nil
}

// copyThreads copies every thread of from, with its record, into tx, and
// counts them in rep. A thread the destination has keeps its own record:
// it may have gone on there.
func copyThreads(ctx context.Context, tx rowcopy.Tx, from rowcopy.Source, rep *Report) error {
	threads, err := from.Threads(ctx)
	if err != nil {
		return err
	}
	for _, t := range threads {
		record, err := from.ThreadRecord(ctx, t.Owner, t.ID)
		if err != nil {
			return err
		}
		copied, err := tx.InsertThread(ctx, t, record)
		if err != nil {
			return fmt.Errorf("thread %s: %w", t.ID, err)
		}
		if copied {
			rep.Threads++
			rep.RecordMessages += len(record)
		} else {
			rep.SkippedThreads++
		}
	}
	return nil
}
